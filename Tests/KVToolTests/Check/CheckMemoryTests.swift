import Foundation
import KVStore
import KVStoreInspection
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

    @Test func checkOfALargeStoreReadsInChunksWithBoundedMemory() async throws {
        let store = TemporaryStore()
        let projects = (0..<100).map { Project(name: "Project \($0)") }
        let container = try ModelContainer(
            for: Project.self, Task.self, configuration: ModelConfiguration(path: store.path, durability: .off))
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

        // The check runs in a child process: tests running in parallel in this one (the model-based tests, for
        // one) grow its heap too, and the measure would count their memory as the check's. The child reports what
        // went wrong on its standard error.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [path = store.path as String, projectCount = projects.count as Int] in
            let failures = try Self.checkWithBoundedMemory(path: path, projectCount: projectCount)
            FileHandle.standardError.write(Data(failures.joined(separator: "\n").utf8))
        }
        let failures = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(failures.isEmpty, Comment(rawValue: failures))
    }

    /// Checks the store at `path` and returns what went wrong: problems found, counts that are off, or a heap that
    /// grew with the store.
    static func checkWithBoundedMemory(path: String, projectCount: Int) throws -> [String] {
        let inspected = try InspectedStore.open(path)
        defer { inspected.close() }
        let storeSize = inspected.dataFile.fileSize
        let chunkSize = 1000
        let baseline = anonymousMemory()
        var peak = baseline
        var failures: [String] = []
        let checker = IntegrityChecker(store: inspected, chunkSize: chunkSize) { problem in
            failures.append("unexpected problem: \(problem)")
        }
        checker.progress = { _ in peak = max(peak, anonymousMemory()) }
        try checker.run()

        let statistics = checker.statistics
        func require(_ condition: Bool, _ failure: @autoclosure () -> String) {
            if !condition { failures.append(failure()) }
        }
        require(checker.errors == 0, "\(checker.errors) errors")
        require(statistics.records == taskCount + projectCount, "\(statistics.records) records")
        require(statistics.largestChunk == chunkSize, "largest chunk \(statistics.largestChunk)")
        // Records of both entities, then the entries of both indexes, a chunk per transaction.
        let minimumTransactions = 2 * (taskCount + projectCount) / chunkSize
        require(statistics.transactions >= minimumTransactions, "\(statistics.transactions) transactions")
        require(storeSize > 32 << 20, "a store of only \(storeSize) bytes")
        require(
            peak - baseline < storeSize / 4, "heap grew by \(peak - baseline) bytes for a \(storeSize)-byte store")
        return failures
    }
}
