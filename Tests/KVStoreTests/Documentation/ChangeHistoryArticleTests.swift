import Foundation
import KVStore
import TestSupport
import Testing

// The examples of the article "Change history".

/// The article's models.
enum HistoryArticle {
    // Example: begin history models
    struct Note: Model {
        var id = UUID.timeOrdered()
        var title: String
        var body: String

        // A deleted note's tombstone keeps its title.
        static let entity = Entity<Note>(preservedOnDeletion: [\.title])
    }

    /// Where a consumer of the history got to, kept in the consumer's own store.
    struct Checkpoint: Model {
        /// The one checkpoint's ID.
        static let backup = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xB0, 0xB0))

        var id = Checkpoint.backup
        var token: HistoryToken
    }
    // Example: end history models

    // Example: begin history consumer
    /// Reads what changed since the last run, and remembers where it got to in `tokenFile`.
    static func catchUp(_ container: ModelContainer, tokenFile: URL) throws -> (changed: Int, deleted: [String]) {
        var token: HistoryToken
        if let saved = try? String(contentsOf: tokenFile, encoding: .utf8), let parsed = HistoryToken(saved) {
            token = parsed
        } else {
            token = try container.lastHistoryToken()  // the first run starts now
        }
        var changed = 0
        var deleted: [String] = []
        do {
            for entry in try container.history(after: token, entities: ["Note"]) {
                changed += entry.changes.count
                for tombstone in entry.tombstones {
                    deleted.append(try tombstone.value(\Note.title) ?? "?")
                }
                token = entry.token
            }
        } catch KVStoreError.historyExpired {
            // Offline longer than the retention: start again from the models as they are now.
            token = try container.lastHistoryToken()
        }
        try token.description.write(to: tokenFile, atomically: true, encoding: .utf8)
        return (changed, deleted)
    }
    // Example: end history consumer

    // Example: begin history backup
    /// Brings `backup` up to date with `source`: the notes inserted or updated since the last run are copied as they
    /// are now, the deleted ones are deleted, and the token goes into the backup in the same transaction.
    static func backUp(_ source: ModelContainer, to backup: ModelContainer) throws {
        let checkpoint = try backup.read { txn in try txn.model(for: Checkpoint.backup, as: Checkpoint.self) }
        let entries = try source.history(after: checkpoint?.token)
        let token = try entries.last?.token ?? checkpoint?.token ?? source.lastHistoryToken()
        var saved: Set<UUID> = []
        var deleted: Set<UUID> = []
        for entry in entries {
            for change in entry.changes where change.entity == "Note" {
                if change.isSave {
                    saved.insert(change.id)
                    deleted.remove(change.id)
                } else {
                    deleted.insert(change.id)
                    saved.remove(change.id)
                }
            }
        }
        // Read after the entries: a note changed since is copied as it is now, and its entry comes next time.
        let notes = try source.read { txn in try txn.models(for: Array(saved), as: Note.self) }
        try backup.write { txn in
            for case let note? in notes { try txn.insert(note) }
            try txn.delete(Note.self, ids: Array(deleted))
            try txn.insert(Checkpoint(token: token))
        }
    }
    // Example: end history backup
}

@Suite struct ChangeHistoryArticleTests {
    typealias Note = HistoryArticle.Note

    @Test func switchingHistoryOnAndReadingIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Example: begin history basics
        let container = try ModelContainer(for: Note.self, configuration: ModelConfiguration(path: directory))
        try container.enableHistory(retention: HistoryRetention(maximumAge: 3 * 24 * 3600))
        let start = try container.lastHistoryToken()

        let context = ModelContext(container)
        context.author = "importer"
        let note = Note(title: "Groceries", body: "Milk")
        context.insert(note)
        try context.save()
        try container.write { txn in try txn.delete(Note.self, id: note.id) }

        let entries = try container.history(after: start)
        #expect(entries.map(\.author) == ["importer", nil])
        #expect(entries[0].inserted == ["Note": [note.id]])
        #expect(entries[1].deleted == ["Note": [note.id]])
        #expect(try entries[1].tombstones[0].value(\Note.title) == "Groceries")
        // Example: end history basics
        try container.close()
    }

    @Test func aConsumerResumesAfterARestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token")
        let configuration = ModelConfiguration(path: directory.appendingPathComponent("store").path)
        let container = try ModelContainer(for: Note.self, configuration: configuration)
        defer { try? container.close() }
        try container.enableHistory()
        #expect(try HistoryArticle.catchUp(container, tokenFile: tokenFile) == (0, []))
        let kept = Note(title: "kept", body: "")
        let gone = Note(title: "gone", body: "")
        try container.write { txn in
            try txn.insert(kept)
            try txn.insert(gone)
        }
        try container.write { txn in try txn.delete(Note.self, id: gone.id) }
        // A restart: only the token file carries over.
        let (changed, deleted) = try HistoryArticle.catchUp(container, tokenFile: tokenFile)
        #expect(changed == 3 && deleted == ["gone"])
        #expect(try HistoryArticle.catchUp(container, tokenFile: tokenFile) == (0, []))
        // Pruned while away: it starts again from now.
        try container.write { txn in try txn.insert(Note(title: "while away", body: "")) }
        try container.deleteHistory(
            before: HistoryToken(storeID: try container.lastHistoryToken().storeID, position: 99))
        try container.write { txn in try txn.insert(Note(title: "after", body: "")) }
        #expect(try HistoryArticle.catchUp(container, tokenFile: tokenFile) == (0, []))
    }

    @Test func aCacheIsInvalidatedFromAnotherProcess() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ModelConfiguration(path: directory)
        let writer = try ModelContainer(for: Note.self, configuration: configuration)  // stands for another process
        defer { try? writer.close() }
        try writer.enableHistory()
        let note = Note(title: "cached", body: "v1")
        try await writer.write { txn in try txn.insert(note) }

        let container = try ModelContainer(for: Note.self, configuration: configuration)
        let cache = NoteCache()
        let invalidation = _Concurrency.Task { await cache.follow(container) }
        await cache.remember(note)
        try await _Concurrency.Task.sleep(for: .milliseconds(50))
        var changed = note
        changed.body = "v2"
        let update = changed
        try await writer.write { txn in try txn.insert(update) }
        var forgotten = false
        for _ in 0..<100 where !forgotten {
            try await _Concurrency.Task.sleep(for: .milliseconds(20))
            forgotten = await cache.note(note.id) == nil
        }
        #expect(forgotten)
        invalidation.cancel()
        try container.close()
    }

    @Test func anIncrementalBackupKeepsUp() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let source = try ModelContainer(
            for: Note.self, configuration: ModelConfiguration(path: root.appendingPathComponent("source").path))
        defer { try? source.close() }
        let backup = try ModelContainer(
            for: Note.self, HistoryArticle.Checkpoint.self,
            configuration: ModelConfiguration(path: root.appendingPathComponent("backup").path))
        defer { try? backup.close() }
        try source.enableHistory()
        var random = SplitMix64(seed: 7)
        var ids: [UUID] = []
        for round in 0..<6 {
            try source.write { txn in
                for index in 0..<20 {
                    let choice = random.next() % 3
                    if choice == 0 || ids.isEmpty {
                        let note = Note(title: "\(round)-\(index)", body: "")
                        try txn.insert(note)
                        ids.append(note.id)
                    } else if choice == 1 {
                        let id = ids[Int(random.next() % UInt64(ids.count))]
                        try txn.insert(Note(id: id, title: "changed \(round)-\(index)", body: "x"))
                    } else {
                        let id = ids.remove(at: Int(random.next() % UInt64(ids.count)))
                        try txn.delete(Note.self, id: id)
                    }
                }
            }
            try HistoryArticle.backUp(source, to: backup)
            let original = try source.read { txn in try txn.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.id)]))
            }
            let copy = try backup.read { txn in try txn.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.id)])) }
            #expect(original.map(\.id) == copy.map(\.id))
            #expect(original.map(\.title) == copy.map(\.title))
        }
    }

    @Test func theArticleShowsTheExamplesAsTested() throws {
        #expect(
            try documentationDifferences(
                [
                    ("history models", 4), ("history consumer", 4), ("history backup", 4), ("history basics", 8),
                    ("history cache", 0),
                ], testedIn: #filePath) == [])
    }
}

// Example: begin history cache
/// Notes kept in memory, each forgotten as soon as any process changes or deletes it.
actor NoteCache {
    private var notes: [UUID: HistoryArticle.Note] = [:]

    func remember(_ note: HistoryArticle.Note) { notes[note.id] = note }
    func note(_ id: UUID) -> HistoryArticle.Note? { notes[id] }

    /// Forgets each note a commit changes, until the task is cancelled.
    func follow(_ container: ModelContainer) async {
        for await changeSet in container.changes(for: [HistoryArticle.Note.self]) {
            // With history on, another process's commits carry their IDs as this one's do.
            guard changeSet.isContentKnown else {
                notes.removeAll()  // history is off: anything may have changed
                continue
            }
            for change in changeSet.changes where change.entity == "Note" { notes[change.id] = nil }
        }
    }
}
// Example: end history cache
