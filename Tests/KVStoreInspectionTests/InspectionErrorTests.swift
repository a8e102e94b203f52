import Foundation
import KVStore
import KVStoreInspection
import LMDB
import Testing

/// The errors `StoreInspection.check` throws when it cannot check a store at all, each with its kind and message.
@Suite struct InspectionErrorTests {
    /// The error the check of `path` throws, which must be an ``InspectionError``.
    private static func checkError(_ path: String) throws -> InspectionError {
        let error = #expect(throws: InspectionError.self) { try StoreInspection.check(path: path) }
        return try #require(error)
    }

    @Test func aMissingPathIsNotAStore() throws {
        let store = TemporaryStore()
        let error = try Self.checkError(store.path)
        #expect(error.kind == InspectionError.notAStore.kind)
        #expect(error.message == "No such store: '\(store.path)' does not exist")
        #expect(error.pageDamage.isEmpty)
        // The kind matches in a catch clause, and no other kind does.
        #expect(InspectionError.notAStore ~= error)
        #expect(!(InspectionError.unreadable ~= error))
    }

    @Test func aDirectoryWithoutADataFileIsNotAStore() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        let error = try Self.checkError(store.path)
        #expect(error == InspectionError.notAStore)
        #expect(error.message == "'\(store.path)' is not a store: the directory holds no data.mdb")
    }

    @Test func aDataFileThatIsNotLMDBIsNotAStoreAndItsFirstBytesAreShown() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        try Data("hello".utf8).write(to: URL(fileURLWithPath: store.path + "/data.mdb"))
        let error = try Self.checkError(store.path)
        #expect(error == InspectionError.notAStore)
        #expect(
            error.message
                == "'\(store.path)' is not a store: its data.mdb is not an LMDB file: it is 5 bytes long, too short "
                + "for one, and its first bytes are 68 65 6c 6c 6f (\"hello\")")
    }

    @Test func aForeignLMDBFileIsNotAKVStoreStoreAndItsTablesAreNamed() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        try store.withEnvironment { environment in
            let settings = try environment.openTable(named: "settings", create: true)
            try environment.write { txn in try txn.put(Array("dark".utf8), forKey: Array("theme".utf8), in: settings) }
        }
        let error = try Self.checkError(store.path)
        #expect(error == InspectionError.notAStore)
        #expect(
            error.message
                == "'\(store.path)' is not a KVStore store: it is an LMDB environment with table settings but no "
                + "KVStore catalog")
    }

    @Test func aMetaPageLMDBWouldCrashOnIsRefusedBeforeLMDBReadsIt() throws {
        let store = TemporaryStore()
        try store.write()
        // The page size is the free list record's md_pad, after the 16-byte page header, the magic number, the
        // version, the address and the map size.
        for page in [0, 1] { try store.patch(page: page, offset: 16 + 24, bytes: [0, 0, 0, 0]) }
        let error = try Self.checkError(store.path)
        #expect(error == InspectionError.unreadable)
        #expect(
            error.message
                == "The store at '\(store.path)' is damaged where it must be read: Meta page 0 names a page size of 0 "
                + "bytes, which LMDB never writes: it is damaged. Restore it from a backup")
        #expect(error.pageDamage.isEmpty)
    }

    @Test func aMetaPageWhoseMainTableRecordIsDamagedIsUnreadableWithThePageCheckFindings() throws {
        let store = TemporaryStore()
        try store.write()
        // md_entries of the main table's record, the second of the meta's two 48-byte records, 32 bytes into it.
        for page in [0, 1] {
            try store.patch(page: page, offset: 16 + 24 + 48 + 32, bytes: Array(repeating: 0xFF, count: 8))
        }
        let error = try Self.checkError(store.path)
        #expect(error == InspectionError.unreadable)
        #expect(!error.pageDamage.isEmpty)
        #expect(error.pageDamage.allSatisfy { $0.severity == .damage })
        let shown = error.pageDamage.prefix(3).map(\.description).joined(separator: " ")
        let more = error.pageDamage.count > 3 ? " And \(error.pageDamage.count - 3) more." : ""
        #expect(
            error.message
                == "The store at '\(store.path)' is damaged where it must be read: \(shown)\(more) Nothing else of it "
                + "can be checked; restore the store from a backup")
        #expect(error.message.contains("of (main)"), "\(error.message)")
    }
}
