import Foundation
import LMDB
import SharingModels
import Synchronization
import Testing

@testable import KVStore

/// Several processes on one store, with old and new schemas at once: each case ends in correct data or a clear
/// error in the process that meets it, never a crash, and nothing a process saw committed is lost.
///
/// The children are the `SharingHelper` executable; each case runs a few rounds to meet its race.
@Suite(.serialized) struct MultiProcessTests {
    private static func seed(_ path: String, count: Int) throws -> [UUID] {
        let container = try ModelContainer(for: NotesV1.self, configuration: sharingConfiguration(path))
        defer { try? container.close() }
        let notes = (0..<count).map { NotesV1.Note(title: "seed \($0 % 50)", body: "a seeded note") }
        try container.write { txn in for note in notes { try txn.insert(note) } }
        return notes.map(\.id)
    }

    private static func migratedIDs(_ path: String) throws -> Set<UUID> {
        let container = try ModelContainer(
            for: NotesV2.self, migrationPlan: NotesPlan.self, configuration: sharingConfiguration(path))
        defer { try? container.close() }
        return Set(try ModelContext(container).fetch(FetchDescriptor<NotesV2.Note>()).map(\.id))
    }

    @Test(arguments: 0..<3)
    func aMigrationBesideAnOlderWriterLosesNothingAndTheWriterStopsWithAClearError(round: Int) throws {
        let directory = StoreDirectory()
        let seeded = try Self.seed(directory.path, count: 200)
        let writer = try ChildProcess(
            ["write", directory.path, "v1", "1000000", "old"], environment: ["SHARING_WRITE_DELAY_US": "500"])
        #expect(writer.waitForLine { $0.hasPrefix("saved ") })
        let migrator = try ChildProcess(["migrate", directory.path], environment: ["SHARING_DELAY_US": "200"])
        #expect(migrator.waitForExit() == "exit 0")
        #expect(migrator.lines.last == "migrated")
        #expect(writer.waitForExit() == "exit 3")
        let ending = try #require(writer.lines.last)
        #expect(ending.hasPrefix("error schemaChanged"), "\(ending)")
        #expect(ending.contains("from schema version 1.0.0 to 2.0.0"))
        let stored = try Self.migratedIDs(directory.path)
        #expect(Set(seeded).isSubset(of: stored))
        #expect(Set(writer.acknowledged).isSubset(of: stored))
        #expect(stored.count == seeded.count + writer.acknowledged.count)
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test(arguments: 0..<3)
    func aMigrationKilledPartWayLetsGoOfItsLockAndResumes(round: Int) throws {
        let directory = StoreDirectory()
        let seeded = try Self.seed(directory.path, count: 400)
        let migrator = try ChildProcess(["migrate", directory.path], environment: ["SHARING_DELAY_US": "2000"])
        #expect(migrator.waitFor("ready"))
        // Let it migrate a few chunks, then kill it at a random moment.
        usleep(UInt32.random(in: 150_000...400_000))
        migrator.kill()
        // A writer of the old version does not wait for a migration whose process is gone: it is told at once.
        let started = ContinuousClock.now
        let writer = try ChildProcess(["write", directory.path, "v1", "10", "late"])
        #expect(writer.waitForExit() == "exit 3")
        #expect(ContinuousClock.now - started < .seconds(10))
        let ending = try #require(writer.lines.last)
        #expect(ending.hasPrefix("error migrationInProgress"), "\(ending)")
        #expect(writer.acknowledged.isEmpty)
        // The next open with the plan finishes the migration.
        #expect(try Self.migratedIDs(directory.path) == Set(seeded))
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func aWriterWaitsForAMigrationUnderWayAndFailsClearlyAfterItsTimeout() throws {
        let directory = StoreDirectory()
        _ = try Self.seed(directory.path, count: 300)
        let configuration = sharingConfiguration(directory.path, waitTimeout: .milliseconds(300))
        // An old-version container opened before the migration: its write waits, then gives up with the versions.
        let container = try ModelContainer(for: NotesV1.self, configuration: configuration)
        defer { try? container.close() }
        let migrator = try ChildProcess(["migrate", directory.path], environment: ["SHARING_DELAY_US": "5000"])
        #expect(migrator.waitFor("ready"))
        usleep(300_000)
        let started = ContinuousClock.now
        let error = try #require(throws: KVStoreError.self) {
            try container.write { txn in try txn.insert(NotesV1.Note(title: "waiting", body: "x")) }
        }
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(error == .migrationInProgress)
        #expect(error.description.contains("from schema version 1.0.0 to 2.0.0"), "\(error)")
        // Opening meanwhile waits for the migration's lock too, and says why it gave up.
        let opening = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: NotesV1.self, configuration: configuration)
        }
        #expect(opening == .migrationInProgress)
        #expect(opening.description.contains("from schema version 1.0.0 to 2.0.0"), "\(opening)")
        migrator.kill()
    }

    /// Opening a container checks the data file's length against its meta page. A writer in another process that
    /// commits between the two reads grows the file before it writes the meta page, so the checks read the meta page
    /// first and the length after it; reading them the other way round reported a healthy store as truncated
    /// ("The data file is 45056 bytes long but its pages reach byte 53248") now and then.
    @Test func opensBesideAWriterThatGrowsTheFileFindNoDamage() throws {
        let directory = StoreDirectory()
        _ = try Self.seed(directory.path, count: 10)
        // The writer saves until it is killed, so that every open races it however slow the build (ASan) is.
        let writer = try ChildProcess(
            ["write", directory.path, "v1", "1000000", "grower"], environment: ["SHARING_BODY_BYTES": "6000"])
        #expect(writer.waitForLine { $0.hasPrefix("saved ") })
        var failures: [String] = []
        var opens = 0
        while writer.isRunning, opens < 60 {
            do {
                try ModelContainer(for: NotesV1.self, configuration: sharingConfiguration(directory.path)).close()
            } catch {
                failures.append("\(error)")
            }
            opens += 1
        }
        #expect(writer.isRunning, "the writer stopped before the opens ended: \(writer.lines.suffix(2))")
        writer.kill()
        #expect(failures == [])
        #expect(opens == 60)
    }

    @Test(arguments: 0..<3)
    func aScriptDeclaringLessBesideTheProgramKeepsItsIndexRight(round: Int) throws {
        let directory = StoreDirectory()
        _ = try Self.seed(directory.path, count: 10)
        let program = try ChildProcess(
            ["write", directory.path, "v1", "400", "program"], environment: ["SHARING_WRITE_DELAY_US": "200"])
        #expect(program.waitForLine { $0.hasPrefix("saved ") })
        let script = try ChildProcess(["write", directory.path, "plain", "400", "script"])
        #expect(script.waitForExit() == "exit 0", "\(script.lines.filter { !$0.hasPrefix("saved") })")
        #expect(program.waitForExit() == "exit 0")
        #expect(try integrityErrors(at: directory.path) == [])
        let container = try ModelContainer(for: NotesV1.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let context = ModelContext(container)
        let title = "script 7"
        let found = try context.fetch(FetchDescriptor<NotesV1.Note>(predicate: #Predicate { $0.title == title }))
        #expect(found.count == 8)
        #expect(
            try context.explain(FetchDescriptor<NotesV1.Note>(predicate: #Predicate { $0.title == title })).contains(
                "index title"))
    }

    @Test func aWriterWhoseIndexAnotherProcessRemovedIsRefusedWithoutACrash() throws {
        let directory = StoreDirectory()
        _ = try Self.seed(directory.path, count: 10)
        let program = try ChildProcess(
            ["write", directory.path, "v1", "100000", "program"], environment: ["SHARING_WRITE_DELAY_US": "1000"])
        #expect(program.waitForLine { $0.hasPrefix("saved ") })
        let remover = try ChildProcess(["write", directory.path, "removing", "5", "remover"])
        #expect(remover.waitForExit() == "exit 0")
        #expect(program.waitForExit() == "exit 3")
        let ending = try #require(program.lines.last)
        #expect(ending.hasPrefix("error schemaChanged"), "\(ending)")
        #expect(ending.contains("index title of Note"))
        #expect(try integrityErrors(at: directory.path) == [])
        let container = try ModelContainer(
            for: TitleRemovingNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let stored = Set(try ModelContext(container).fetch(FetchDescriptor<TitleRemovingNote>()).map(\.id))
        #expect(Set(program.acknowledged).isSubset(of: stored))
        #expect(Set(remover.acknowledged).isSubset(of: stored))
    }

    @Test(arguments: 0..<3)
    func aUniqueConstraintHoldsAcrossProcessesThatDoNotAllDeclareIt(round: Int) throws {
        let directory = StoreDirectory()
        try ModelContainer(for: UniqueNote.self, configuration: sharingConfiguration(directory.path)).close()
        let declaring = try ChildProcess(["write", directory.path, "unique", "200", "shared"])
        let script = try ChildProcess(["write", directory.path, "plain", "200", "shared"])
        #expect(declaring.waitForExit() == "exit 0", "\(declaring.lines.filter { !$0.hasPrefix("saved") })")
        #expect(script.waitForExit() == "exit 0", "\(script.lines.filter { !$0.hasPrefix("saved") })")
        let container = try ModelContainer(for: UniqueNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let notes = try ModelContext(container).fetch(FetchDescriptor<UniqueNote>())
        #expect(Set(notes.map(\.title)).count == notes.count)
        #expect(notes.count == 50)
        #expect(Set(notes.map(\.id)) == Set(declaring.acknowledged + script.acknowledged))
        #expect(try integrityErrors(at: directory.path) == [])
    }

    /// Two processes insert notes of the same 50 titles under new IDs: each title ends as one note, the first one
    /// saved, updated by every later save of its title in either process, and every save acknowledged names it.
    @Test(arguments: 0..<3)
    func uniqueUpsertsMergeAcrossProcesses(round: Int) throws {
        let directory = StoreDirectory()
        try ModelContainer(for: UpsertNote.self, configuration: sharingConfiguration(directory.path)).close()
        let first = try ChildProcess(["write", directory.path, "upsert", "200", "shared"])
        let second = try ChildProcess(["write", directory.path, "upsert", "200", "shared"])
        #expect(first.waitForExit() == "exit 0", "\(first.lines.filter { !$0.hasPrefix("saved") })")
        #expect(second.waitForExit() == "exit 0", "\(second.lines.filter { !$0.hasPrefix("saved") })")
        let container = try ModelContainer(for: UpsertNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let notes = try ModelContext(container).fetch(FetchDescriptor<UpsertNote>())
        #expect(notes.count == 50)
        #expect(Set(notes.map(\.title)).count == 50)
        #expect(first.acknowledged.count == 200 && second.acknowledged.count == 200)
        #expect(Set(first.acknowledged + second.acknowledged) == Set(notes.map(\.id)))
        // Each note holds the body of the last save of its title: the 4th of 4 in one of the processes.
        for note in notes {
            let index = Int(note.title.split(separator: " ").last ?? "") ?? -1
            #expect(note.body.hasSuffix(" \(150 + index)"), "\(note.title): \(note.body)")
        }
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func aKilledStreamedWritersChunksAreDeletedEvenWhenItsProcessIDNamesALiveProcess() throws {
        let directory = StoreDirectory()
        let streamer = try ChildProcess(["stream", directory.path])
        #expect(streamer.waitFor("staged"))
        streamer.kill()
        // Make the staging entry name a live process (as a reused process ID would): only its lock tells.
        do {
            let environment = try Environment.open(path: directory.path)
            let staging = try environment.openTable(named: Catalog.stagingTableName("Attachment"))
            try environment.write { txn in
                let entries = try txn.entries(in: staging)
                #expect(entries.count == 1)
                for entry in entries {
                    var value = entry.value
                    withUnsafeBytes(of: UInt32(1).bigEndian) { value.replaceSubrange(0..<4, with: $0) }
                    try txn.put(value, forKey: entry.key, in: staging)
                }
            }
            try environment.close()
        }
        let container = try ModelContainer(for: Attachment.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let store = try container.store(for: Attachment.self)
        let table = try #require(store.externalTable)
        #expect(try container.environment.read { txn in try txn.count(of: table.staging) } == 0)
        #expect(try container.environment.read { txn in try txn.count(of: table.chunks) } == 0)
        #expect(try integrityErrors(at: directory.path) == [])
    }

    /// An open that reads the catalog, then checks the stored records while a writer in another process interns
    /// new field names and ends, reads every record the writer saved with its values; one that also records an
    /// index in the catalog keeps the names the writer interned meanwhile.
    @Test(arguments: [false, true])
    func anOpenBesideAWriterOfNewFieldNamesReadsAndKeepsThem(declaringAnIndex: Bool) throws {
        let directory = StoreDirectory()
        try ModelContainer(for: TaggedNote.self, configuration: sharingConfiguration(directory.path)).close()
        let writer = try ChildProcess(["write", directory.path, "tagged", "100", "w"])
        #expect(writer.waitForLine { $0.hasPrefix("saved ") })
        // The open's check of the first record waits for the writer to end.
        WaitingTaggedNote.whileDecoding.withLock { $0 = { _ = writer.waitForExit() } }
        let container = try ModelContainer(
            for: declaringAnIndex ? IndexedWaitingTaggedNote.self as any Model.Type : WaitingTaggedNote.self,
            configuration: sharingConfiguration(directory.path))
        #expect(WaitingTaggedNote.whileDecoding.withLock { $0 } == nil)
        #expect(writer.waitForExit() == "exit 0", "\(writer.lines.filter { !$0.hasPrefix("saved") })")
        #expect(writer.acknowledged.count == 100)
        let read =
            declaringAnIndex
            ? try ModelContext(container).fetch(FetchDescriptor<IndexedWaitingTaggedNote>()).map { ($0.id, $0.tags) }
            : try ModelContext(container).fetch(FetchDescriptor<WaitingTaggedNote>()).map { ($0.id, $0.tags) }
        try container.close()
        let reopened = try ModelContainer(for: TaggedNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? reopened.close() }
        let stored = try ModelContext(reopened).fetch(FetchDescriptor<TaggedNote>()).map { ($0.id, $0.tags) }
        for notes in [read, stored] {
            #expect(Set(notes.map(\.0)) == Set(writer.acknowledged))
            // Save number i holds the one tag "w-i", of value i.
            for (id, tags) in notes {
                let tag = tags.values.first
                #expect(tags.values.count == 1 && tag?.key == "w-\(tag?.value ?? -1)", "\(id): \(tags)")
            }
        }
        #expect(try integrityErrors(at: directory.path) == [])
    }
}

/// ``TaggedNote``, whose first decoding runs ``whileDecoding`` first: a test holds an open between its read of the
/// catalog and its check of the records.
private struct WaitingTaggedNote: Model {
    var id: UUID
    var title: String
    var tags: TaggedNote.Tags

    static let whileDecoding = Mutex<(@Sendable () -> Void)?>(nil)
    static let entity = Entity<WaitingTaggedNote>(name: "TaggedNote", indexes: [.index(\.title)])

    private enum CodingKeys: String, CodingKey {
        case id
        case title
        case tags
    }

    init(from decoder: any Decoder) throws {
        Self.whileDecoding.withLock { wait in
            wait?()
            wait = nil
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        tags = try container.decode(TaggedNote.Tags.self, forKey: .tags)
    }
}

/// ``WaitingTaggedNote`` with a second index, which its open records in the catalog.
private struct IndexedWaitingTaggedNote: Model {
    var id: UUID
    var title: String
    var tags: TaggedNote.Tags

    static let entity = Entity<IndexedWaitingTaggedNote>(
        name: "TaggedNote", indexes: [.index(\.title), .index(\.title, \.id)])

    init(from decoder: any Decoder) throws {
        let waiting = try WaitingTaggedNote(from: decoder)
        (id, title, tags) = (waiting.id, waiting.title, waiting.tags)
    }
}
