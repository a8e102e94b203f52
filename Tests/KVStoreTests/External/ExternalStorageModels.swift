import Foundation
import LMDB
import Testing

@testable import KVStore

// Models with external attributes, with one parent per delete rule: deleting any of them, by any path, must delete
// its external values in the same transaction.

struct PhotoE: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var image = ExternalData()
    var thumbnail = ExternalData()
    var albumID: UUID?
    var folderID: UUID?
    var vaultID: UUID?
    var binID: UUID?

    static let entity = Entity<PhotoE>(
        relationships: [
            .toOne("album", \.albumID, to: AlbumE.self, inverse: "photos"),
            .toOne("folder", \.folderID, to: FolderE.self, inverse: "photos"),
            .toOne("vault", \.vaultID, to: VaultE.self, inverse: "photos"),
            .toOne("bin", \.binID, to: BinE.self, inverse: "photos"),
        ],
        externalStorage: [.attribute(\.image), .attribute(\.thumbnail)])
}

struct AlbumE: Model, Equatable {
    var id = UUID.timeOrdered()
    var cover = ExternalData()
    static let entity = Entity<AlbumE>(
        relationships: [.toMany("photos", of: PhotoE.self, inverse: \.albumID, deleteRule: .cascade)],
        externalStorage: [.attribute(\.cover)])
}

struct FolderE: Model, Equatable {
    var id = UUID.timeOrdered()
    var icon = ExternalData()
    static let entity = Entity<FolderE>(
        relationships: [.toMany("photos", of: PhotoE.self, inverse: \.folderID, deleteRule: .nullify)],
        externalStorage: [.attribute(\.icon)])
}

struct VaultE: Model, Equatable {
    var id = UUID.timeOrdered()
    var key = ExternalData()
    static let entity = Entity<VaultE>(
        relationships: [.toMany("photos", of: PhotoE.self, inverse: \.vaultID, deleteRule: .deny)],
        externalStorage: [.attribute(\.key)])
}

struct BinE: Model, Equatable {
    var id = UUID.timeOrdered()
    var label = ExternalData()
    static let entity = Entity<BinE>(
        relationships: [.toMany("photos", of: PhotoE.self, inverse: \.binID, deleteRule: .noAction)],
        externalStorage: [.attribute(\.label)])
}

/// Every model type of the external storage tests.
let externalModelTypes: [any Model.Type] = [PhotoE.self, AlbumE.self, FolderE.self, VaultE.self, BinE.self]

/// Bytes that differ from chunk to chunk and from value to value, so that a chunk in the wrong place shows.
func patternBytes(_ count: Int, seed: UInt8 = 1) -> Data {
    patternBytes(0..<count, seed: seed)
}

/// The bytes at `range` of the pattern of ``patternBytes(_:seed:)``.
func patternBytes(_ range: Range<Int>, seed: UInt8 = 1) -> Data {
    var bytes = [UInt8](repeating: 0, count: range.count)
    bytes.withUnsafeMutableBufferPointer { buffer in
        for offset in 0..<buffer.count {
            let index = range.lowerBound + offset
            buffer[offset] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 12) &+ seed
        }
    }
    return Data(bytes)
}

/// Opens a store of the external storage models in a temporary directory.
func withExternalContainer<R>(_ body: (ModelContainer) throws -> R) throws -> R {
    try withContainer(PhotoE.self, AlbumE.self, FolderE.self, VaultE.self, BinE.self, body: body)
}

extension ModelContainer {
    /// The number of chunks of an entity's external values, counted in the raw table.
    func chunkCount<M: Model>(of type: M.Type) throws -> Int {
        let table = try #require(try store(for: M.self).externalTable)
        return try environment.read { txn in try txn.count(of: table.chunks) }
    }

    /// The number of streamed values of an entity whose write has not finished.
    func stagedCount<M: Model>(of type: M.Type) throws -> Int {
        let table = try #require(try store(for: M.self).externalTable)
        return try environment.read { txn in try txn.count(of: table.staging) }
    }
}

/// The number of chunks a value of `count` bytes takes.
func chunks(for count: Int) -> Int {
    (count + ExternalValueTable.chunkSize - 1) / ExternalValueTable.chunkSize
}

// Models with optional external attributes, as SwiftData's `@Attribute(.externalStorage) var photo: Data?` ports.

struct ItemE: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var photo: ExternalData?
    var scan: ExternalData?
    var shelfID: UUID?

    static let entity = Entity<ItemE>(
        relationships: [.toOne("shelf", \.shelfID, to: ShelfE.self, inverse: "items")],
        externalStorage: [.attribute(\.photo), .attribute(\.scan)])
}

struct ShelfE: Model, Equatable {
    var id = UUID.timeOrdered()
    var label: ExternalData?
    static let entity = Entity<ShelfE>(
        relationships: [.toMany("items", of: ItemE.self, inverse: \.shelfID, deleteRule: .cascade)],
        externalStorage: [.attribute(\.label)])
}

/// Opens a store of the optional and the non-optional external storage models in a temporary directory.
func withOptionalExternalContainer<R>(_ body: (ModelContainer) throws -> R) throws -> R {
    try withContainer(
        ItemE.self, ShelfE.self, PhotoE.self, AlbumE.self, FolderE.self, VaultE.self, BinE.self, body: body)
}

extension ModelContainer {
    /// The model of type `type` with `id` as stored.
    func stored<M: Model>(_ type: M.Type, _ id: UUID) throws -> M? {
        try read { txn in try txn.model(for: id, as: M.self) }
    }

    /// How many commits this container made so far.
    var commitCount: Int {
        writeOrder.withLock { $0 }
    }
}
