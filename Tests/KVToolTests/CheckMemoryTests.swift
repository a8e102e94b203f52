import Foundation
import KVStore
import Testing

@testable import KVToolCore

/// `check` on a store of 200,000 records keeps memory bounded: one chunk of records per read transaction, and
/// heap growth far below the size of the store.
@Suite struct CheckMemoryTests {
    static let taskCount = 200_000

    /// The anonymous (heap and stack) memory of the process in bytes, from /proc; the store's memory-mapped pages
    /// are file-backed and not counted, so this measures what the check itself holds.
    static func anonymousMemory() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }

    @Test func checkOfALargeStoreReadsInChunksWithBoundedMemory() throws {
        let store = TemporaryStore()
        let projects = (0..<100).map { Project(name: "Project \($0)") }
        let container = try ModelContainer(
            for: Project.self, Task.self, configuration: ModelConfiguration(path: store.path, isDurable: false))
        let context = ModelContext(container)
        for project in projects { context.insert(project) }
        for number in 0..<Self.taskCount {
            context.insert(
                Task(
                    title: "Task number \(number) with a title long enough to look real", isDone: number % 3 == 0,
                    dueDate: number % 2 == 0 ? Date(timeIntervalSinceReferenceDate: Double(number)) : nil,
                    projectID: projects[number % projects.count].id))
            if number % 10_000 == 9_999 { try context.save() }
        }
        try context.save()
        try container.close()
        try Sample.addRelationships(at: store.path)

        let inspected = try InspectedStore.open(store.path)
        defer { inspected.close() }
        let storeSize = inspected.dataFile.fileSize
        let chunkSize = 1000
        let baseline = Self.anonymousMemory()
        var peak = baseline
        let checker = IntegrityChecker(store: inspected, chunkSize: chunkSize) { problem in
            Issue.record("unexpected problem: \(problem.text)")
        }
        checker.chunkObserver = { _ in peak = max(peak, Self.anonymousMemory()) }
        try checker.run()

        let statistics = checker.statistics
        #expect(checker.errors == 0)
        #expect(statistics.records == Self.taskCount + projects.count)
        #expect(statistics.largestChunk == chunkSize)
        // Records of both entities, then the entries of both indexes, a chunk per transaction.
        let minimumTransactions = 2 * (Self.taskCount + projects.count) / chunkSize
        #expect(statistics.transactions >= minimumTransactions)
        #expect(storeSize > 32 << 20)
        #expect(peak - baseline < storeSize / 4, "heap grew by \(peak - baseline) bytes for a \(storeSize)-byte store")
    }
}
