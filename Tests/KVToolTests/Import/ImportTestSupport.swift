import Foundation
import KVStore
import KVStoreInspection
import LMDB
import Testing

@testable import KVToolCore

/// Helpers of the export and import tests.
enum ImportTesting {
    /// Writes lines, each followed by a line break, to a new file.
    static func write(_ lines: [String], to path: String) throws {
        try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The export of a store, with the header's creation time (which the import's store has its own of) blanked.
    static func export(_ path: String, _ extra: String...) throws -> String {
        let result = kvtool(arguments: ["export", path] + extra)
        try #require(result.status == 0, "export failed: \(result.errors)")
        return withoutCreationTime(result.output)
    }

    /// An export's text with the `created` member of its header blanked.
    static func withoutCreationTime(_ export: String) -> String {
        guard let start = export.range(of: #","created":""#), let end = export[start.upperBound...].firstIndex(of: "\"")
        else { return export }
        return export.replacingCharacters(in: start.upperBound..<end, with: "…")
    }

    /// The ID of the store's last committed transaction, from its data file's header.
    static func lastTransaction(_ path: String) throws -> Int {
        try #require(try DataFile(directory: path).header?.transactionID)
    }

    /// The bytes of the store's data file.
    static func dataFile(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
    }

    /// The catalog's import entry, if any.
    static func progress(_ path: String) throws -> ImportProgress? {
        let store = try InspectedStore.open(path)
        defer { store.close() }
        return try store.environment.read { txn in try ImportProgress.read(in: txn, catalog: store.catalog) }
    }

    /// `count` bytes that depend on `seed`, made eight at a time: building large values byte by byte costs seconds in a
    /// debug build.
    static func pattern(_ count: Int, seed: UInt64) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { bytes in
            var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
            var offset = 0
            while offset < count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                withUnsafeBytes(of: state) { word in
                    let length = Swift.min(8, count - offset)
                    bytes[offset..<offset + length].copyBytes(from: word.prefix(length))
                }
                offset += 8
            }
        }
        return data
    }

    /// The result of `kvtool check`, which must find no error.
    static func expectClean(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let result = kvtool("check", path)
        #expect(result.status == 0, "check: \(result.output)", sourceLocation: sourceLocation)
    }
}

/// The input's fingerprint, which a resume compares, does not depend on how reads cut the input.
@Suite struct FingerprintTests {
    @Test func theHashDoesNotDependOnHowTheBytesArrive() {
        let bytes = Array(ImportTesting.pattern(1000, seed: 5))
        var whole = Fingerprint()
        bytes.withUnsafeBytes { whole.add($0) }
        for cut in [1, 3, 7, 8, 9, 64, 999] {
            var pieces = Fingerprint()
            var offset = 0
            while offset < bytes.count {
                let end = Swift.min(offset + cut, bytes.count)
                bytes[offset..<end].withUnsafeBytes { pieces.add($0) }
                offset = end
            }
            #expect(pieces.text == whole.text, "pieces of \(cut) bytes")
        }
        var other = Fingerprint()
        var changed = bytes
        changed[500] ^= 1
        changed.withUnsafeBytes { other.add($0) }
        #expect(other.text != whole.text)
        #expect(whole.text.count == 16)
    }
}
