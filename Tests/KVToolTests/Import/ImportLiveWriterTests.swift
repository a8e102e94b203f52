import Foundation
import KVStore
import Testing

@testable import KVToolCore

/// A task of another version of the program, with a note: what the import brings.
struct NotedTask: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var isDone = false
    var dueDate: Date?
    var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
    var projectID: UUID?
    var note: String?

    static let entity = Entity<NotedTask>(name: "Task", indexes: [.index(\.projectID)])
}

/// A task of the running program, with a priority it first stores while the import runs.
struct PriorityTask: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var isDone = false
    var dueDate: Date?
    var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
    var projectID: UUID?
    var priority: Int?

    static let entity = Entity<PriorityTask>(name: "Task", indexes: [.index(\.projectID)])
}

/// An import is just another writer: it runs beside a program that writes the store, and both end up in step.
@Suite struct ImportLiveWriterTests {
    static let importedCount = 400

    /// Before: the import interned field names in a catalog entry read once at its start and never checked the
    /// generation, so a program that interned a name meanwhile (here `priority`, while the import interns `note`)
    /// could be given the same field id, and records of one read as the other's.
    @Test func anImportBesideALiveWriterKeepsIndexesAndFieldNamesInStep() throws {
        let source = TemporaryStore()
        let target = TemporaryStore()
        let noted = (0..<Self.importedCount).map { number in
            NotedTask(
                title: "Imported \(number)", projectID: number % 2 == 0 ? Sample.garden.id : Sample.inbox.id,
                note: "note \(number)")
        }
        let sourceContainer = try ModelContainer(
            for: NotedTask.self, configuration: ModelConfiguration(path: source.path, durability: .off))
        try sourceContainer.write { txn in
            for task in noted { try txn.insert(task) }
        }
        try sourceContainer.close()
        let file = source.sibling("noted.jsonl")
        #expect(kvtool("export", source.path, "--output", file).status == 0)
        try Sample.makeStore(at: target.path)

        let program = try ModelContainer(
            for: Project.self, PriorityTask.self, configuration: ModelConfiguration(path: target.path))
        defer { try? program.close() }
        let process = Process()
        process.executableURL = try BinarySmokeTests.executable()
        process.arguments = ["import", target.path, file, "--chunk-size", "10"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var live: [PriorityTask] = []
        repeat {
            let task = PriorityTask(title: "Live \(live.count)", projectID: Sample.garden.id, priority: live.count)
            try program.write { txn in try txn.insert(task) }
            live.append(task)
        } while process.isRunning
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(message)")
        #expect(live.count > 1, "the program wrote while the import ran: \(live.count)")
        let last = PriorityTask(title: "After", projectID: Sample.garden.id, priority: -1)
        try program.write { txn in try txn.insert(last) }
        live.append(last)

        let check = kvtool("check", target.path)
        #expect(check.status == 0, "\(check.output)")
        #expect(!check.output.contains("error"), "\(check.output)")
        // The program's index queries see the imported records and its own.
        let context = ModelContext(program)
        let gardenID = Sample.garden.id
        let garden = try context.fetch(
            FetchDescriptor<PriorityTask>(predicate: #Predicate { $0.projectID == gardenID }))
        #expect(garden.count == Self.importedCount / 2 + 2 + live.count)
        #expect(Set(garden.compactMap(\.priority)) == Set(live.compactMap(\.priority)))
        let inboxID = Sample.inbox.id
        let inbox = try context.fetch(FetchDescriptor<PriorityTask>(predicate: #Predicate { $0.projectID == inboxID }))
        #expect(inbox.count == Self.importedCount / 2 + 1)
        try program.close()

        // The other program reads its notes back.
        let reader = try ModelContainer(for: NotedTask.self, configuration: ModelConfiguration(path: target.path))
        defer { try? reader.close() }
        let read = try ModelContext(reader).models(for: noted.map(\.id), as: NotedTask.self)
        #expect(read == noted)
    }
}
