import Foundation

/// Bytes that another owner keeps alive: a record, key or chunk inside LMDB's memory map, or an array's storage for
/// the length of a closure.
///
/// The codec and the engine read stored bytes in place, without copying them, through this view; it is one of the
/// few places of the module that hold unsafe code (ARCHITECTURE.md lists them). It rests on two invariants:
///
/// - **Lifetime.** The memory stays valid and unchanged for as long as the view is used. Only lenders make views: the
///   `withBorrowedBytes` functions below lend one to a closure and nothing longer, and the transaction's reads
///   (`Store/Transaction+BorrowedBytes.swift`) return views of the map that stay valid until their transaction ends
///   or writes. A view must not outlive its lender: keep `Array(view)` instead. This is the one promise the compiler
///   can't check; the lenders' scopes keep it.
/// - **Bounds.** Every read checks its offsets (a precondition, in release builds too, as `Array` does), so a damaged
///   record can make a decoder throw but never read outside its bytes.
///
/// Indices start at zero; ``extracting(_:)`` returns a view of a range, indexed from zero again.
@safe
package struct BorrowedBytes: RandomAccessCollection {
    /// The borrowed memory; see the type's invariants.
    private let base: UnsafeRawBufferPointer

    /// A view of `base`, which must stay valid and unchanged while the view is used.
    @unsafe
    @inline(__always)
    package init(unsafe base: UnsafeRawBufferPointer) {
        unsafe self.base = base
    }

    /// No bytes.
    package static var empty: BorrowedBytes {
        unsafe BorrowedBytes(unsafe: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// The number of bytes.
    @inline(__always)
    package var count: Int { unsafe base.count }

    /// Zero.
    @inline(__always)
    package var startIndex: Int { 0 }

    /// The number of bytes.
    @inline(__always)
    package var endIndex: Int { unsafe base.count }

    /// The byte at `position`, which must be in `0..<count`.
    @inline(__always)
    package subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "byte offset out of bounds")
        return unsafe base[position]
    }

    /// The bytes of `bounds`, which must lie in `0...count`, as a view indexed from zero.
    @inline(__always)
    package func extracting(_ bounds: some RangeExpression<Int>) -> BorrowedBytes {
        let range = bounds.relative(to: self)
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "byte range out of bounds")
        return unsafe BorrowedBytes(unsafe: UnsafeRawBufferPointer(rebasing: base[range]))
    }

    /// The `count` bytes at `offset` as an integer in the machine's byte order, with no alignment needed.
    @inline(__always)
    package func loadUnaligned<T: FixedWidthInteger & BitwiseCopyable>(
        fromByteOffset offset: Int = 0, as type: T.Type
    ) -> T {
        precondition(offset >= 0 && offset <= count - MemoryLayout<T>.size, "integer read out of bounds")
        return unsafe base.loadUnaligned(fromByteOffset: offset, as: T.self)
    }

    /// The 16 bytes at `offset` as a UUID.
    ///
    /// A UUID is its 16 bytes (its one stored property is the `uuid_t` tuple), so they are loaded as two integers
    /// and reinterpreted: `init(uuid:)` takes the tuple as sixteen separate arguments, which costs several times more
    /// where records and index keys are read by the thousand. `unsafeBitCast` checks that the sizes agree, and every
    /// bit pattern is a UUID.
    @inline(__always)
    package func loadUUID(fromByteOffset offset: Int = 0) -> UUID {
        precondition(offset >= 0 && offset <= count - 16, "UUID read out of bounds")
        return unsafe unsafeBitCast(
            base.loadUnaligned(fromByteOffset: offset, as: (UInt64, UInt64).self), to: UUID.self)
    }

    /// Whether both views hold the same bytes.
    @inline(__always)
    package func elementsEqual(_ other: BorrowedBytes) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let left = unsafe base.baseAddress, let right = unsafe other.base.baseAddress else {
            return true
        }
        return unsafe memcmp(left, right, count) == 0
    }

    /// The order of the two views' bytes as `memcmp` gives it, a shorter prefix first: negative when `self` sorts
    /// first, zero when they are equal, positive when `other` does. This is LMDB's default key order.
    @inline(__always)
    package func compare(_ other: BorrowedBytes) -> Int {
        let common = Swift.min(count, other.count)
        if common > 0, let left = unsafe base.baseAddress, let right = unsafe other.base.baseAddress {
            let order = unsafe memcmp(left, right, common)
            if order != 0 { return Int(order) }
        }
        return count - other.count
    }

    /// Whether the view begins with the bytes of `prefix`.
    @inline(__always)
    package func starts(with prefix: BorrowedBytes) -> Bool {
        prefix.count <= count && extracting(0..<prefix.count).elementsEqual(prefix)
    }

    /// Lends the bytes as a contiguous buffer: the generic `Collection<UInt8>` APIs of the LMDB binding and of the
    /// standard library take this fast path.
    @inline(__always)
    package func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        try unsafe body(base.assumingMemoryBound(to: UInt8.self))
    }

    /// Lends the raw buffer, for the C calls of the fenced files (LMDB's reads, the CRC-32C). Outside them the
    /// compiler asks for an `unsafe` mark and the fence check (`UnsafeFenceTests`) refuses it.
    @inline(__always)
    package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try unsafe body(base)
    }
}

// MARK: - Lenders

extension Array where Element == UInt8 {
    /// Lends the array's bytes to `body` as a view that must not outlive the call.
    @inline(__always)
    package func withBorrowedBytes<R>(_ body: (BorrowedBytes) throws -> R) rethrows -> R {
        try unsafe withUnsafeBytes { raw in try body(unsafe BorrowedBytes(unsafe: raw)) }
    }
}

extension ArraySlice where Element == UInt8 {
    /// Lends the slice's bytes to `body` as a view that must not outlive the call.
    @inline(__always)
    package func withBorrowedBytes<R>(_ body: (BorrowedBytes) throws -> R) rethrows -> R {
        try unsafe withUnsafeBytes { raw in try body(unsafe BorrowedBytes(unsafe: raw)) }
    }
}

extension Data {
    /// Lends the data's bytes to `body` as a view that must not outlive the call.
    @inline(__always)
    package func withBorrowedBytes<R>(_ body: (BorrowedBytes) throws -> R) rethrows -> R {
        try unsafe withUnsafeBytes { raw in try body(unsafe BorrowedBytes(unsafe: raw)) }
    }
}

extension String {
    /// Lends the string's UTF-8 bytes to `body` as a view that must not outlive the call (it makes the string
    /// contiguous first, as `withUTF8` does).
    @inline(__always)
    package mutating func withBorrowedUTF8<R>(_ body: (BorrowedBytes) throws -> R) rethrows -> R {
        try withUTF8 { utf8 in try body(unsafe BorrowedBytes(unsafe: UnsafeRawBufferPointer(utf8))) }
    }
}

/// Lends the bytes of a value without padding or references (an integer, a `uuid_t`) to `body` as a view that must
/// not outlive the call.
@inline(__always)
package func withBorrowedBytes<T: BitwiseCopyable, R, E: Error>(
    of value: T, _ body: (BorrowedBytes) throws(E) -> R
) throws(E) -> R {
    try unsafe withUnsafeBytes(of: value) { (raw) throws(E) -> R in try body(unsafe BorrowedBytes(unsafe: raw)) }
}
