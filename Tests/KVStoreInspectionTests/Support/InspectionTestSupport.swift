import Foundation
@_spi(Testing) import KVStore
import LMDB

/// A book on a shelf: `shelf` has an index, `title` and `pages` have none.
struct Book: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var shelf: String
    var pages: Int

    static let entity = Entity<Book>(indexes: [.index(\.shelf)])
}

/// A file handle whose path is unique, and may be longer than LMDB's key limit.
struct Handle: Model, Equatable {
    var id = UUID.timeOrdered()
    var path: String

    static let entity = Entity<Handle>(indexes: [.unique(\.path)])
}

/// The books every test store holds: three shelves, one of them with two books.
let sampleBooks = [
    Book(title: "Middlemarch", shelf: "novels", pages: 880),
    Book(title: "Persuasion", shelf: "novels", pages: 249),
    Book(title: "The Elements", shelf: "mathematics", pages: 527),
    Book(title: "Leaves of Grass", shelf: "poetry", pages: 145),
]

/// A fresh directory path for a store, removed at the end of the test.
struct TemporaryStore: ~Copyable {
    /// The store's directory (not created).
    let path: String

    /// Picks a fresh path under the temporary directory.
    init() {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath()
        path = base.appendingPathComponent("inspection-tests-\(UUID().uuidString)").path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Writes `books` and `handles` at the path through the library, and closes the store.
    ///
    /// - Parameter collidingLongKeys: Whether every unique value longer than LMDB's key limit shares its cut key with
    ///   every other of the same prefix (the library's hash for tests), so that reads must confirm each owner.
    func write(books: [Book] = sampleBooks, handles: [Handle] = [], collidingLongKeys: Bool = false) throws {
        var configuration = ModelConfiguration(path: path, durability: .off)
        configuration.collidesLongKeysForTesting = collidingLongKeys
        let container = try ModelContainer(for: Book.self, Handle.self, configuration: configuration)
        try container.write { txn in
            for book in books { try txn.insert(book) }
            for handle in handles { try txn.insert(handle) }
        }
        try container.close()
    }

    /// Opens the store's environment through the LMDB binding, runs `body` and closes it.
    func withEnvironment<R>(_ body: (Environment) throws -> R) throws -> R {
        let environment = try Environment.open(path: path, configuration: Environment.Configuration(maxTables: 64))
        defer { try? environment.close() }
        return try body(environment)
    }

    /// Writes `bytes` at byte `offset` of page `page` (4 KiB pages) of the store's data file.
    func patch(page: Int, offset: Int, bytes: [UInt8]) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path + "/data.mdb"))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(page * 4096 + offset))
        try handle.write(contentsOf: Data(bytes))
    }
}

/// The 16 bytes of a UUID, the key of its record.
func keyBytes(_ id: UUID) -> [UInt8] {
    withUnsafeBytes(of: id.uuid) { Array($0) }
}
