import Foundation
@_spi(Testing) import KVStore
import Testing

@testable import KVToolCore

/// A model whose unique values are longer than LMDB's key limit.
struct Handle: Model, Equatable {
    var id = UUID.timeOrdered()
    var path: String
    static let entity = Entity<Handle>(indexes: [.unique(\.path)])
}

/// Import is exact for unique values of any length: values that share a cut key are not duplicates, and a value a
/// stored record holds is found.
@Suite struct ImportLongKeyTests {
    private static func collidingStore(at path: String, _ handles: [Handle]) throws {
        var configuration = ModelConfiguration(path: path, durability: .off)
        configuration.collidesLongKeysForTesting = true
        let container = try ModelContainer(for: Handle.self, configuration: configuration)
        try container.write { txn in for handle in handles { try txn.insert(handle) } }
        try container.close()
    }

    private static func long(_ suffix: String) -> String {
        String(repeating: "/a/long/shared/prefix", count: 40) + suffix
    }

    @Test func longUniqueValuesThatShareACutKeyImportAndADuplicateIsRefused() throws {
        let source = TemporaryStore()
        let handles = (0..<20).map { Handle(path: Self.long("/\($0)")) }
        try Self.collidingStore(at: source.path, handles)
        let export = try ImportTesting.export(source.path)
        let file = source.sibling("handles.jsonl")
        try export.write(toFile: file, atomically: true, encoding: .utf8)
        // Into a store whose hash makes every one of them share a cut key.
        let target = TemporaryStore()
        try Self.collidingStore(at: target.path, [])
        let imported = kvtool("import", target.path, file)
        #expect(imported.status == 0, "\(imported)")
        #expect(kvtool("check", target.path).output.hasPrefix("No problems"))
        #expect(kvtool("count", target.path, "Handle").output == "20\n")
        // A store that holds one of the values already refuses the file before any write.
        let other = TemporaryStore()
        try Self.collidingStore(at: other.path, [Handle(path: Self.long("/7"))])
        let before = try ImportTesting.lastTransaction(other.path)
        let refused = kvtool("import", other.path, file)
        #expect(refused.status != 0)
        #expect(refused.errors.contains("is already used by the stored Handle"), "\(refused.errors)")
        #expect(try ImportTesting.lastTransaction(other.path) == before)
    }
}
