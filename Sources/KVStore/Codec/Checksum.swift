import CCRC32C

/// The checksum of KVStore's stored bytes: CRC-32C (Castagnoli), with the SSE 4.2 instruction where the CPU has it.
///
/// LMDB 0.9 has no checksums of its own, and trusts its pages: without these, a byte changed inside a record or a
/// chunk on disk would be read back as data.
///
/// One of the module's few places with unsafe code (ARCHITECTURE.md lists them), its one C call. Invariant: the C
/// function reads exactly the bytes of the view it is given, which are valid for the call.
package enum Checksum {
    /// The CRC-32C of `bytes`.
    package static func crc32c(_ bytes: BorrowedBytes) -> UInt32 {
        // The one C call of the codec: it reads `count` bytes from the base address, the bytes of the view.
        unsafe bytes.withUnsafeBytes { unsafe kvstore_crc32c(0, $0.baseAddress, $0.count) }
    }

    /// The CRC-32C of `bytes`.
    package static func crc32c(_ bytes: [UInt8]) -> UInt32 {
        bytes.withBorrowedBytes { crc32c($0) }
    }

    /// Appends the CRC-32C of `bytes[start...]`, little-endian, to `bytes`.
    ///
    /// Byte by byte: every save appends one, and `append(contentsOf:)` of a raw buffer goes through a generic path
    /// that costs several times more.
    @inline(__always)
    static func append(to bytes: inout [UInt8], from start: Int) {
        let crc = bytes.withBorrowedBytes { crc32c($0.extracting(start...)) }
        bytes.append(UInt8(truncatingIfNeeded: crc))
        bytes.append(UInt8(truncatingIfNeeded: crc >> 8))
        bytes.append(UInt8(truncatingIfNeeded: crc >> 16))
        bytes.append(UInt8(truncatingIfNeeded: crc >> 24))
    }

    /// Whether the last 4 bytes of `bytes` are the little-endian CRC-32C of the bytes before them.
    static func isValid(trailing bytes: BorrowedBytes) -> Bool {
        guard bytes.count >= 4 else { return false }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
        return crc32c(bytes.extracting(..<(bytes.count - 4))) == stored
    }
}
