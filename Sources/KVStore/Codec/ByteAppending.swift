import Foundation

// The encoder's fixed-size appends: a tag byte and a value's bytes, written into a small buffer on the stack and
// appended in one go, so a fixed-size value costs one capacity check, not one per byte (every save writes dates,
// doubles and UUIDs this way). One of the module's few files with unsafe code (ARCHITECTURE.md lists them).
//
// Invariant: each buffer is a local value at least as wide as what is read from it (checked below), written and
// read only inside its own `withUnsafe(Mutable)Bytes`.

extension Array where Element == UInt8 {
    /// Appends a tag byte, then the low `count` (at most 8) bytes of `value`, least significant first, in one
    /// append: a fixed-size value costs one capacity check, not one per byte.
    @inline(__always)
    mutating func appendTagged(_ kind: ValueKind, littleEndian value: UInt64, count: Int) {
        precondition(count >= 0 && count <= 8, "a fixed-size value has at most 8 bytes")
        var buffer: (UInt64, UInt64) = (0, 0)
        unsafe Swift.withUnsafeMutableBytes(of: &buffer) { buffer in
            unsafe buffer[0] = kind.rawValue
            unsafe buffer.storeBytes(of: value.littleEndian, toByteOffset: 1, as: UInt64.self)
            unsafe append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<(1 + count)]))
        }
    }

    /// Appends a tag byte, then the 16 bytes of `uuid`, in one append.
    @inline(__always)
    mutating func appendTagged(_ kind: ValueKind, uuid: UUID) {
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        unsafe Swift.withUnsafeMutableBytes(of: &buffer) { buffer in
            unsafe buffer[0] = kind.rawValue
            unsafe buffer.storeBytes(of: uuid.uuid, toByteOffset: 1, as: uuid_t.self)
            unsafe append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<17]))
        }
    }

    /// Appends the bytes of a value without padding or references (an integer in a chosen byte order, a `uuid_t`)
    /// in one append.
    @inline(__always)
    mutating func appendBytes<T: BitwiseCopyable>(of value: T) {
        unsafe Swift.withUnsafeBytes(of: value) { unsafe append(contentsOf: $0) }
    }
}
