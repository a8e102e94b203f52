import Foundation
import LMDB
import Testing

@testable import KVStore

/// A note as a first program stores it.
private struct TitledNote: Model {
    var id = UUID.timeOrdered()
    var title: String
    static let entity = Entity<TitledNote>(name: "Note")
}

/// The same entity read by a program whose `title` is a number.
private struct NumberedNote: Model {
    var id = UUID.timeOrdered()
    var title: Int
    static let entity = Entity<NumberedNote>(name: "Note")
}

/// The deprecated spelling as code compiled against it reaches it; a protocol requirement that it witnesses is no
/// use of it, so the deprecation warning, an error in this package's builds, is not raised here.
private protocol DescribesUnderlying {
    var underlying: String? { get set }
}

extension KVStoreError: DescribesUnderlying {}

/// A store error keeps the error underneath as a value that `catch` and casts match, beside its message.
@Suite struct KVStoreErrorTests {
    @Test func aFullMapKeepsLMDBsMapFullAsTheCause() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(
            path: directory.path, durability: .off, initialMapSize: 256 << 10, maximumMapSize: 512 << 10)
        let container = try ModelContainer(for: Task.self, configuration: configuration)
        defer { try? container.close() }
        let error = try #require(throws: KVStoreError.self) {
            try container.write { txn in
                for index in 0..<5_000 { try txn.insert(Task(title: String(repeating: "x", count: 200) + "\(index)")) }
            }
        }
        #expect(error == .storage)
        let cause = try #require(error.cause as? LMDBError)
        #expect(cause.code == LMDBError.mapFull.code)
        #expect(cause.path == container.environment.path)
        var matched = false
        do {
            throw try #require(error.cause)
        } catch LMDBError.mapFull {
            matched = true
        } catch {
            Issue.record("The cause \(error) is not LMDBError.mapFull")
        }
        #expect(matched)
        // The description still ends with the cause's, as before the cause was kept.
        #expect(error.description.hasSuffix("(\(cause))"))
    }

    @Test(arguments: [LMDBError.noSpace.code, EDQUOT])
    func aFullDiskKeepsTheErrnoAsTheCause(code: Int32) throws {
        let mapped = ModelContainer.mapped(LMDBError(code: code, operation: "mdb_txn_commit", path: "/srv/store"))
        let error = try #require(mapped as? KVStoreError)
        #expect(error == .diskFull)
        let cause = try #require(error.cause as? LMDBError)
        #expect(cause.code == code)
        #expect(cause.operation == "mdb_txn_commit")
    }

    @Test func aRecordThatDoesNotDecodeKeepsTheDecodingError() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        do {
            let container = try ModelContainer(for: TitledNote.self, configuration: configuration)
            defer { try? container.close() }
            try container.write { txn in try txn.insert(TitledNote(title: "not a number")) }
        }
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: NumberedNote.self, configuration: configuration)
        }
        #expect(error == .incompatibleSchema)
        #expect(error.field == "title")
        let cause = try #require(error.cause as? DecodingError)
        guard case .typeMismatch(_, let context) = cause else {
            Issue.record("The cause \(cause) is not a type mismatch")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["title"])
    }

    @Test func aWriteInAReadTransactionIsReadOnlyAndKeepsTheBindingsError() throws {
        try withContainer(Task.self) { container throws in
            let error = try #require(throws: KVStoreError.self) {
                try container.read { txn in try txn.insert(Task(title: "written in a read")) }
            }
            #expect(error == .readOnly)
            #expect((error.cause as? LMDBError)?.code == LMDBError.accessDenied.code)
        }
    }

    @Test func errorsAreEqualAndHashAlikeByKindWhateverTheirCauses() {
        let full = KVStoreError(.storage, message: "full", cause: LMDBError.mapFull)
        let readers = KVStoreError(.storage, message: "readers", cause: LMDBError.readersFull)
        let bare = KVStoreError(.storage, message: "no cause")
        #expect(full == readers)
        #expect(full == bare)
        #expect(Set([full, readers, bare]).count == 1)
        #expect(full != KVStoreError(.damaged, message: "full", cause: LMDBError.mapFull))
        #expect(KVStoreError.storage ~= full)
        #expect(!(KVStoreError.storage ~= LMDBError.mapFull))
    }

    @Test func theDeprecatedUnderlyingIsTheCausesDescription() throws {
        var error: any DescribesUnderlying = KVStoreError(.storage, message: "full", cause: LMDBError.mapFull)
        #expect(error.underlying == String(describing: LMDBError.mapFull))
        error.underlying = "set by old code"
        #expect(error.underlying == "set by old code")
        let updated = try #require(error as? KVStoreError)
        #expect(updated.cause.map { "\($0)" } == "set by old code")
        #expect(updated.description == "full (set by old code)")
    }
}
