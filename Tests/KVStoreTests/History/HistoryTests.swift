import Foundation
import LMDB
import Testing

@testable import KVStore

/// A folder whose notes go with it.
private struct HFolder: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    static let entity = Entity<HFolder>(
        indexes: [.unique(\.name)],
        relationships: [.toMany("notes", of: HNote.self, inverse: \.folderID, deleteRule: .cascade)],
        preservedOnDeletion: [\.name])
}

/// A note whose title and tags its tombstone keeps.
private struct HNote: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var body = ""
    var tags: [String] = []
    var folderID: UUID?
    static let entity = Entity<HNote>(
        relationships: [.toOne("folder", \.folderID, to: HFolder.self, inverse: "notes")],
        preservedOnDeletion: [\.title, \.tags, \.folderID])
}

/// The persistent change history: entries written with each commit, read after a token, pruned, across containers.
@Suite struct HistoryTests {
    private func container(_ directory: borrowing StoreDirectory, author: String? = nil) throws -> ModelContainer {
        var configuration = ModelConfiguration(path: directory.path)
        configuration.historyAuthor = author
        return try ModelContainer(for: HFolder.self, HNote.self, configuration: configuration)
    }

    @Test func aStoreRecordsNoHistoryUntilItIsSwitchedOn() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        try container.write { txn in try txn.insert(HNote(title: "before")) }
        #expect(try container.historyRetention() == nil)
        #expect(throws: KVStoreError.historyNotEnabled) { try container.history() }
        #expect(throws: KVStoreError.historyNotEnabled) { try container.lastHistoryToken() }

        let start = try container.enableHistory()
        #expect(start.position == 0)
        #expect(try container.history(after: start).isEmpty)
        #expect(try container.historyRetention() == .default)
        // The catalog stamps format 4, which older versions of KVStore refuse.
        let format = try container.environment.read { txn in
            try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: container.catalogTable)
        }
        #expect(format?.formatVersion == 4)
    }

    @Test func eachCommitRecordsWhatItChangedWithItsAuthorAndTime() throws {
        let directory = StoreDirectory()
        let container = try container(directory, author: "service")
        defer { try? container.close() }
        let start = try container.enableHistory()
        let before = Date()

        let context = ModelContext(container)
        context.author = "importer"
        let folder = HFolder(name: "Inbox")
        var note = HNote(title: "Plan", folderID: folder.id)
        context.insert(folder)
        context.insert(note)
        try context.save()
        note.title = "Plan more"
        try container.write { txn in try txn.insert(note) }
        try container.write { txn in
            txn.historyAuthor = "sync"
            try txn.delete(HFolder.self, id: folder.id)
        }

        let entries = try container.history(after: start)
        try #require(entries.count == 3)
        #expect(entries.map(\.token.position) == [1, 2, 3])
        #expect(entries.map(\.author) == ["importer", "service", "sync"])
        #expect(entries.allSatisfy { $0.date >= before.addingTimeInterval(-1) && $0.date <= Date() })
        #expect(entries[0].changes == [.inserted(HFolder.self, folder.id), .inserted(HNote.self, note.id)])
        #expect(entries[1].changes == [.updated(HNote.self, note.id)])
        #expect(entries[1].updated == ["HNote": [note.id]])
        #expect(
            entries[2].changes == [
                ChangeSet.Change(.deleted, entity: "HFolder", id: folder.id),
                ChangeSet.Change(
                    .cascaded(from: ChangeSet.ModelID(HFolder.self, id: folder.id)), entity: "HNote", id: note.id),
            ])
        #expect(entries[2].deleted == ["HFolder": [folder.id], "HNote": [note.id]])
        // The tombstones keep what the entities preserve, and nothing else.
        let tombstones = entries[2].tombstones
        try #require(tombstones.count == 2)
        #expect(tombstones[0].entity == "HFolder" && tombstones[0].id == folder.id && tombstones[0].cascadedFrom == nil)
        #expect(try tombstones[0].value(of: "name", as: String.self) == "Inbox")
        #expect(tombstones[1].cascadedFrom == ChangeSet.ModelID(HFolder.self, id: folder.id))
        #expect(tombstones[1].fieldNames == ["folderID", "tags", "title"])
        #expect(try tombstones[1].value(\HNote.title) == "Plan more")
        #expect(try tombstones[1].value(\HNote.folderID) == folder.id)
        #expect(try tombstones[1].value(\HNote.tags) == [])
        #expect(try tombstones[1].value(of: "body", as: String.self) == nil)
        #expect(throws: KVStoreError.corruptRecord) { try tombstones[1].value(of: "title", as: Int.self) }
        #expect(try container.lastHistoryToken() == entries[2].token)
    }

    @Test func aWriteThatFailsOrChangesNothingRecordsNothing() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        let start = try container.enableHistory()
        try container.write { txn in try txn.insert(HFolder(name: "A")) }
        #expect(throws: KVStoreError.uniqueViolation) {
            try container.write { txn in try txn.insert(HFolder(name: "A")) }
        }
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try container.write { txn in
                try txn.insert(HNote(title: "dropped"))
                throw Refused()
            }
        }
        try container.write { _ in }
        try container.write { txn in try txn.insert(HFolder(name: "B")) }
        let entries = try container.history(after: start)
        #expect(entries.map(\.token.position) == [1, 2])
        #expect(entries.flatMap(\.changes).map(\.entity) == ["HFolder", "HFolder"])
    }

    @Test func aTokenRoundTripsAndNamesItsStore() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        try container.enableHistory()
        try container.write { txn in try txn.insert(HNote(title: "one")) }
        let token = try container.lastHistoryToken()
        let data = try JSONEncoder().encode(token)
        #expect(try JSONDecoder().decode(HistoryToken.self, from: data) == token)
        #expect(HistoryToken(token.description) == token)
        #expect(HistoryToken("not a token") == nil)
        #expect(HistoryToken("\(token.storeID.uuidString):-1") == nil)

        let foreign = HistoryToken(storeID: UUID(), position: 1)
        #expect(throws: KVStoreError.invalidHistoryToken) { try container.history(after: foreign) }
        #expect(throws: KVStoreError.invalidHistoryToken) { try container.deleteHistory(before: foreign) }
        let future = HistoryToken(storeID: token.storeID, position: token.position + 1)
        #expect(throws: KVStoreError.invalidHistoryToken) { try container.history(after: future) }
        #expect(throws: KVStoreError.invalidModel) { try container.history(after: token, limit: -1) }
    }

    @Test func readsFilterByEntityAndAuthorWithALimit() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        let start = try container.enableHistory()
        for index in 0..<6 {
            try container.write { txn in
                txn.historyAuthor = index.isMultiple(of: 2) ? "even" : "odd"
                if index.isMultiple(of: 3) {
                    try txn.insert(HFolder(name: "F\(index)"))
                } else {
                    try txn.insert(HNote(title: "N\(index)"))
                }
            }
        }
        #expect(try container.history(after: start, entities: ["HFolder"]).map(\.token.position) == [1, 4])
        #expect(try container.history(after: start, author: "odd").map(\.token.position) == [2, 4, 6])
        #expect(
            try container.history(after: start, entities: ["HNote"], author: "even").map(\.token.position) == [3, 5])
        #expect(try container.history(after: start, limit: 2).map(\.token.position) == [1, 2])
        let second = try container.history(after: start, limit: 2)[1].token
        #expect(try container.history(after: second, limit: 2).map(\.token.position) == [3, 4])
        #expect(try container.history(after: start, limit: 0).isEmpty)
        #expect(try container.history(after: start, entities: []).isEmpty)
    }

    @Test func retentionByCountPrunesAndAPrunedTokenIsRefused() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        let start = try container.enableHistory(retention: HistoryRetention(maximumAge: nil, maximumCount: 3))
        for index in 0..<5 { try container.write { txn in try txn.insert(HNote(title: "\(index)")) } }
        #expect(try container.history().map(\.token.position) == [3, 4, 5])
        #expect(throws: KVStoreError.historyExpired) { try container.history(after: start) }
        let oldest = HistoryToken(storeID: start.storeID, position: 2)
        #expect(try container.history(after: oldest).map(\.token.position) == [3, 4, 5])
        #expect(throws: KVStoreError.invalidModel) {
            try container.enableHistory(retention: HistoryRetention(maximumAge: nil, maximumCount: 0))
        }
        #expect(throws: KVStoreError.invalidModel) {
            try container.enableHistory(retention: HistoryRetention(maximumAge: 0))
        }
    }

    @Test func retentionByAgePrunesEntriesOlderThanItKeeps() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        try container.enableHistory(retention: HistoryRetention(maximumAge: 0.2))
        try container.write { txn in try txn.insert(HNote(title: "old")) }
        try container.write { txn in try txn.insert(HNote(title: "old too")) }
        Thread.sleep(forTimeInterval: 0.3)
        try container.write { txn in try txn.insert(HNote(title: "new")) }
        #expect(try container.history().map(\.token.position) == [3])
    }

    @Test func deleteHistoryBeforeATokenKeepsThatEntryAndLater() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        let start = try container.enableHistory(retention: .unlimited)
        for index in 0..<5 { try container.write { txn in try txn.insert(HNote(title: "\(index)")) } }
        let third = try container.history(after: start)[2].token
        #expect(try container.deleteHistory(before: third) == 2)
        #expect(try container.history().map(\.token.position) == [3, 4, 5])
        #expect(try container.history(after: HistoryToken(storeID: start.storeID, position: 2)).count == 3)
        #expect(throws: KVStoreError.historyExpired) { try container.history(after: start) }
        #expect(try container.deleteHistory(before: third) == 0)
    }

    @Test func historySurvivesReopeningAndPositionsGoOn() throws {
        let directory = StoreDirectory()
        var token: HistoryToken
        do {
            let container = try container(directory)
            try container.enableHistory()
            try container.write { txn in try txn.insert(HNote(title: "one")) }
            token = try container.lastHistoryToken()
            try container.close()
        }
        let container = try container(directory)
        defer { try? container.close() }
        try container.write { txn in try txn.insert(HNote(title: "two")) }
        let entries = try container.history(after: token)
        #expect(entries.map(\.token.position) == [token.position + 1])
        #expect(entries.first?.token.storeID == token.storeID)
    }

    @Test func aContainerOpenedBeforeHistoryWasSwitchedOnRecordsItsNextWrite() throws {
        let directory = StoreDirectory()
        let early = try container(directory, author: "early")
        defer { try? early.close() }
        let late = try container(directory, author: "late")
        defer { try? late.close() }
        try early.write { txn in try txn.insert(HNote(title: "unrecorded")) }
        let start = try late.enableHistory()
        try early.write { txn in try txn.insert(HNote(title: "recorded")) }
        try late.write { txn in try txn.insert(HNote(title: "recorded too")) }
        let entries = try early.history(after: start)
        #expect(entries.map(\.author) == ["early", "late"])
    }

    @Test func switchingHistoryOffDeletesItAndANewHistoryRefusesOldTokens() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        try container.enableHistory()
        try container.write { txn in try txn.insert(HNote(title: "one")) }
        let old = try container.lastHistoryToken()
        try container.disableHistory()
        #expect(throws: KVStoreError.historyNotEnabled) { try container.history(after: old) }
        try container.write { txn in try txn.insert(HNote(title: "unrecorded")) }
        let start = try container.enableHistory()
        #expect(start.storeID != old.storeID && start.position == 0)
        #expect(throws: KVStoreError.invalidHistoryToken) { try container.history(after: old) }
        try container.write { txn in try txn.insert(HNote(title: "two")) }
        #expect(try container.history(after: start).count == 1)
    }

    @Test func aReadOnlyContainerReadsHistoryAndCannotChangeIt() throws {
        let directory = StoreDirectory()
        let writer = try container(directory)
        defer { try? writer.close() }
        let start = try writer.enableHistory()
        try writer.write { txn in try txn.insert(HNote(title: "one")) }
        var configuration = ModelConfiguration(path: directory.path)
        configuration.isReadOnly = true
        let reader = try ModelContainer(for: HFolder.self, HNote.self, configuration: configuration)
        defer { try? reader.close() }
        #expect(try reader.history(after: start).count == 1)
        #expect(throws: KVStoreError.readOnly) { try reader.enableHistory() }
        #expect(throws: KVStoreError.readOnly) { try reader.disableHistory() }
        #expect(throws: KVStoreError.readOnly) { try reader.deleteHistory(before: start) }
    }

    @Test func aDamagedEntryIsReportedNotMisread() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        let start = try container.enableHistory()
        try container.write { txn in try txn.insert(HNote(title: "one")) }
        try container.write { txn in try txn.insert(HNote(title: "two")) }
        let table = try #require(container.schema.withLock { $0.history?.table })
        try container.environment.write { txn in
            var bytes = try #require(try txn.value(forKey: HistoryTable.key(2), in: table.table))
            bytes[bytes.count / 2] ^= 0x40
            try txn.put(bytes, forKey: HistoryTable.key(2), in: table.table)
        }
        #expect(throws: KVStoreError.damaged) { try container.history(after: start) }
        #expect(try container.history(after: start, limit: 1).count == 1)
        // Deleting up to the damaged entry reads past it.
        try container.deleteHistory(before: HistoryToken(storeID: start.storeID, position: 3))
        try container.write { txn in try txn.insert(HNote(title: "three")) }
        #expect(try container.history().map(\.token.position) == [3])
    }

    @Test func aDamagedCounterStopsWritesWithAClearErrorUntilHistoryStartsAgain() throws {
        let directory = StoreDirectory()
        let container = try container(directory)
        defer { try? container.close() }
        try container.enableHistory()
        try container.write { txn in try txn.insert(HNote(title: "one")) }
        let table = try #require(container.schema.withLock { $0.history?.table })
        try container.environment.write { txn in
            var bytes = try #require(try txn.value(forKey: HistoryTable.counterKey, in: table.table))
            bytes[3] ^= 0x01
            try txn.put(bytes, forKey: HistoryTable.counterKey, in: table.table)
        }
        let error = try #require(throws: KVStoreError.self) {
            try container.write { txn in try txn.insert(HNote(title: "refused")) }
        }
        #expect(error == .damaged)
        #expect(error.message.contains("history counter is damaged"))
        #expect(throws: KVStoreError.damaged) { try container.lastHistoryToken() }
        // Nothing of the refused write was written, and a new history lets writes go on.
        #expect(try container.read { txn in try txn.fetchCount(FetchDescriptor<HNote>()) } == 1)
        try container.disableHistory()
        let start = try container.enableHistory()
        try container.write { txn in try txn.insert(HNote(title: "two")) }
        #expect(try container.history(after: start).count == 1)
    }

    @Test func entriesDecodeWhatTheyEncodeAndRefuseTruncations() throws {
        let id = UUID()
        let cause = ChangeSet.ModelID(entity: "HFolder", id: UUID())
        let changes = [
            ChangeSet.Change(.inserted, entity: "HNote", id: UUID()),
            ChangeSet.Change(.nullified(by: cause), entity: "HNote", id: UUID()),
            ChangeSet.Change(.cascaded(from: cause), entity: "HNote", id: id),
        ]
        let kept: [ChangeSet.ModelID: [(name: String, value: RecordValue)]] = [
            ChangeSet.ModelID(entity: "HNote", id: id): [("title", .string("kept")), ("tags", .array([.string("a")]))]
        ]
        let date = Date(timeIntervalSince1970: 1_800_000_000.25)
        let bytes = try HistoryTable.encode(
            changes, keptValues: kept, author: "ü", date: date, origin: 77, transactionID: 12)
        let token = HistoryToken(storeID: UUID(), position: 9)
        let entry = try bytes.withBorrowedBytes { try HistoryTable.decode($0, token: token) }
        #expect(entry.changes == changes && entry.author == "ü" && entry.date == date && entry.token == token)
        #expect(entry.origin == 77 && entry.transactionID == 12)
        #expect(entry.tombstones.count == 1)
        #expect(try entry.tombstones[0].value(of: "tags", as: [String].self) == ["a"])
        for length in 0..<bytes.count {
            #expect(throws: KVStoreError.damaged) {
                try Array(bytes.prefix(length)).withBorrowedBytes { try HistoryTable.decode($0, token: token) }
            }
        }
    }
}

/// A reference model whose tombstone keeps its title, with a to-many that cascades.
private final class Shelf: PersistentModel {
    var id = UUID.timeOrdered()
    var label: String
    @ToMany var items: [ShelfItem]

    init(label: String) { self.label = label }

    static let entity = Entity<Shelf>(
        relationships: [.toMany("items", \.items, inverse: "shelf", deleteRule: .cascade)],
        preservedOnDeletion: [\.label])
}

private final class ShelfItem: PersistentModel {
    var id = UUID.timeOrdered()
    var title: String
    @ToOne var shelf: Shelf?

    init(title: String) { self.title = title }

    static let entity = Entity<ShelfItem>(
        relationships: [.toOne("shelf", \.shelf, inverse: "items")], preservedOnDeletion: [\.title])
}

/// Reference models record the same history as structs, tombstones included.
@Suite struct ReferenceModelHistoryTests {
    @Test func aContextOfReferenceModelsRecordsItsSavesAndTombstones() throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(for: Shelf.self, configuration: ModelConfiguration(path: directory.path))
        defer { try? container.close() }
        let start = try container.enableHistory()
        let context = ModelContext(container)
        context.author = "shelver"
        let shelf = Shelf(label: "Fiction")
        shelf.items.append(ShelfItem(title: "Dune"))
        context.insert(shelf)
        try context.save()
        shelf.label = "Novels"
        try context.save()
        context.delete(shelf)
        try context.save()

        let entries = try container.history(after: start)
        try #require(entries.count == 3)
        #expect(entries.allSatisfy { $0.author == "shelver" })
        #expect(
            entries[0].inserted == [
                "Shelf": [shelf.id], "ShelfItem": [try #require(entries[0].inserted["ShelfItem"]?.first)],
            ])
        #expect(entries[1].changes == [ChangeSet.Change(.updated, entity: "Shelf", id: shelf.id)])
        #expect(entries[2].deleted["Shelf"] == [shelf.id] && entries[2].deleted["ShelfItem"]?.count == 1)
        let tombstones = Dictionary(uniqueKeysWithValues: entries[2].tombstones.map { ($0.entity, $0) })
        #expect(try tombstones["Shelf"]?.value(\Shelf.label) == "Novels")
        #expect(try tombstones["ShelfItem"]?.value(\ShelfItem.title) == "Dune")
    }
}
