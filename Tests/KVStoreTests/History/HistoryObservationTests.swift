import Foundation
import SharingModels
import Testing

@testable import KVStore

/// Change streams built on the persistent history: other processes' commits with their IDs, and subscribers that
/// fall behind catching up instead of missing change sets.
@Suite struct HistoryObservationTests {
    @Test func anotherContainersCommitsArriveWithTheirIDsAndTokens() async throws {
        let directory = StoreDirectory()
        let observing = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? observing.close() }
        let writing = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? writing.close() }
        let start = try observing.enableHistory()
        var changes = observing.changes.makeAsyncIterator()
        let local = PlainNote(title: "local", body: "")
        try await observing.write { txn in try txn.insert(local) }
        var external: [UUID] = []
        for index in 0..<5 {
            let note = PlainNote(title: "external \(index)", body: "")
            try await writing.write { txn in try txn.insert(note) }
            external.append(note.id)
        }
        let first = try #require(await next(&changes))
        #expect(!first.isExternal && first.inserted == ["Note": [local.id]])
        #expect(first.historyToken == HistoryToken(storeID: start.storeID, position: 1))
        var received: [ChangeSet] = []
        while received.count < 5, let set = await next(&changes) { received.append(set) }
        #expect(received.map { $0.inserted["Note"]?.first } == external)
        #expect(received.allSatisfy { $0.isExternal && $0.isContentKnown && $0.missed == 0 })
        #expect(received.map { $0.historyToken?.position } == [2, 3, 4, 5, 6])
        #expect(received.map(\.changes) == external.map { [ChangeSet.Change(.inserted, entity: "Note", id: $0)] })
    }

    @Test func anotherProcesssCommitsArriveWithTheirIDsInOrder() async throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let start = try container.enableHistory()
        var changes = container.changes(for: [PlainNote.self]).makeAsyncIterator()
        let writer = try ChildProcess(["write", directory.path, "plain", "30", "child"])
        #expect(writer.waitForExit() == "exit 0")
        let saved = writer.lines.compactMap { $0.hasPrefix("saved ") ? UUID(uuidString: String($0.dropFirst(6))) : nil }
        #expect(saved.count == 30)
        var received: [ChangeSet] = []
        while received.count < 30, let set = await next(&changes) { received.append(set) }
        #expect(received.map { $0.inserted["Note"]?.first } == saved)
        #expect(received.allSatisfy { $0.isExternal && $0.isContentKnown })
        // The history says the same.
        let entries = try container.history(after: start)
        #expect(entries.map { $0.changes.first?.id } == saved)
    }

    @Test func aSubscriberThatFallsBehindCatchesUpFromTheHistoryInOrder() async throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        try container.enableHistory()
        var changes = container.changes(for: nil, bufferSize: 2).makeAsyncIterator()
        var written: [UUID] = []
        for index in 0..<25 {
            let note = PlainNote(title: "\(index)", body: "")
            try await container.write { txn in try txn.insert(note) }
            written.append(note.id)
        }
        var received: [ChangeSet] = []
        while received.count < 25, let set = await next(&changes) { received.append(set) }
        #expect(received.map { $0.inserted["Note"]?.first } == written)
        #expect(received.allSatisfy { $0.missed == 0 && !$0.isExternal })
        // Once caught up, it is live again.
        let late = PlainNote(title: "late", body: "")
        try await container.write { txn in try txn.insert(late) }
        #expect(await next(&changes)?.inserted["Note"]?.first == late.id)
    }

    @Test func aSubscriberBehindPastTheRetentionIsToldHowManyItMissed() async throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        try container.enableHistory(retention: HistoryRetention(maximumAge: nil, maximumCount: 3))
        var changes = container.changes(for: nil, bufferSize: 1).makeAsyncIterator()
        var written: [UUID] = []
        for index in 0..<10 {
            let note = PlainNote(title: "\(index)", body: "")
            try await container.write { txn in try txn.insert(note) }
            written.append(note.id)
        }
        var received: [ChangeSet] = []
        while received.count < 4, let set = await next(&changes) { received.append(set) }
        #expect(received.map { $0.inserted["Note"]?.first } == [written[0]] + written.suffix(3))
        #expect(received.map(\.missed) == [0, 6, 0, 0])
    }

    @Test(arguments: 0..<4)
    func aWriterKilledAtARandomMomentLeavesHistoryThatMatchesItsAcknowledgedSaves(round: Int) throws {
        let directory = StoreDirectory()
        let start: HistoryToken
        do {
            let container = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
            start = try container.enableHistory(retention: .unlimited)
            try container.close()
        }
        let writer = try ChildProcess(["write", directory.path, "plain", "1000000", "killed"])
        #expect(writer.waitForLine { $0.hasPrefix("saved ") })
        usleep(UInt32.random(in: 20_000...150_000))
        writer.kill()
        _ = writer.waitForExit()
        let acknowledged = writer.lines.compactMap {
            $0.hasPrefix("saved ") ? UUID(uuidString: String($0.dropFirst(6))) : nil
        }
        let container = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let recorded = try container.history(after: start).map { try #require($0.changes.first).id }
        let stored = try container.read { txn in try txn.fetch(FetchDescriptor<PlainNote>()) }.map(\.id)
        // Every acknowledged save has its entry, in order; at most one more commit landed before its report.
        #expect(Array(recorded.prefix(acknowledged.count)) == acknowledged)
        #expect(recorded.count - acknowledged.count <= 1)
        // The history names exactly the stored notes.
        #expect(Set(recorded) == Set(stored))
        #expect(try container.lastHistoryToken().position == UInt64(recorded.count))
    }

    @Test func withoutHistoryAnotherContainersCommitsArriveWithoutContent() async throws {
        let directory = StoreDirectory()
        let observing = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? observing.close() }
        let writing = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(directory.path))
        defer { try? writing.close() }
        var changes = observing.changes.makeAsyncIterator()
        try await writing.write { txn in try txn.insert(PlainNote(title: "x", body: "")) }
        let set = try #require(await next(&changes))
        #expect(set.isExternal && !set.isContentKnown && set.historyToken == nil)
        #expect(set.touches("Note") && !set.isEmpty)
    }
}

/// Migrations write models too: each chunk records its history entry, named after the stage.
@Suite struct HistoryMigrationTests {
    @Test func aMigrationRecordsWhatItRewroteChunkByChunk() throws {
        let directory = StoreDirectory()
        let start: HistoryToken
        var ids: [UUID] = []
        do {
            let container = try ModelContainer(for: NotesV1.self, configuration: sharingConfiguration(directory.path))
            start = try container.enableHistory()
            let notes = (0..<25).map { NotesV1.Note(title: "note \($0)", body: "one two") }
            try container.write { txn in for note in notes { try txn.insert(note) } }
            ids = notes.map(\.id)
            try container.close()
        }
        let container = try ModelContainer(
            for: NotesV2.self, migrationPlan: NotesPlan.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let entries = try container.history(after: start)
        // The insert, then one entry per chunk of 10 (the plan's chunk size), in the commit of its chunk.
        #expect(entries.map(\.changes.count) == [25, 10, 10, 5])
        #expect(entries.dropFirst().allSatisfy { $0.author == "migration 1.0.0 → 2.0.0" })
        let migrated = entries.dropFirst().flatMap(\.changes)
        #expect(
            migrated
                == ids.sorted { $0.isOrdered(before: $1) }.map { ChangeSet.Change(.updated, entity: "Note", id: $0) })
        // And the history goes on after it.
        try container.write { txn in try txn.insert(NotesV2.Note(title: "after", body: "", words: 0)) }
        #expect(try container.history(after: entries.last?.token).map(\.author) == [nil])
    }
}
