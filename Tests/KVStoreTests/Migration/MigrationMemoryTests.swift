import Foundation
import LMDB
import Testing

@testable import KVStore

/// The plan of the large migration: chunks of 1,000 records, the default.
private enum LargeTodosPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [TodosV2.self, TodosV3.self]
    static let stages: [MigrationStage] = [
        .custom(
            fromVersion: TodosV2.self, toVersion: TodosV3.self,
            migrations: [.transform(TodosV2.Todo.self, to: TodosV3.Todo.self, TodosV3.migrate)])
    ]
}

/// A custom migration of 1,000,000 records keeps memory bounded: one chunk of models per write transaction, however
/// many records there are. It takes minutes in a debug build, so it runs only with `KVSTORE_LARGE_TESTS=1`
/// (`make test-large`).
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["KVSTORE_LARGE_TESTS"] == "1",
        "set KVSTORE_LARGE_TESTS=1 (make test-large) to run the 1M-record migration"))
struct MigrationMemoryTests {
    /// 1,000,000, or `KVSTORE_LARGE_RECORDS`.
    static let recordCount =
        ProcessInfo.processInfo.environment["KVSTORE_LARGE_RECORDS"].flatMap { Int($0) } ?? 1_000_000

    /// The anonymous (heap and stack) memory of the process in bytes, from /proc; the store's memory-mapped pages
    /// are file-backed and not counted.
    static func anonymousMemory() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }

    @Test func aMillionRecordMigrationRunsWithBoundedMemory() async throws {
        let directory = StoreDirectory()
        do {
            let container = try ModelContainer(
                for: TodosV2.self, configuration: MigrationSupport.configuration(directory.path))
            let context = ModelContext(container)
            let todos = (0..<Self.recordCount).lazy.map { number in
                TodosV2.Todo(
                    id: UUID.timeOrdered(), title: "item \(number)", notes: "some notes of item \(number)",
                    priority: number % 3 == 0 ? nil : number % 7)
            }
            #expect(try context.insert(contentsOf: todos, chunkSize: 10_000) == Self.recordCount)
            try container.close()
        }

        // The migration runs in a child process, so that tests running in parallel in this one do not count in its
        // memory. It reports its measures, and what went wrong, on its standard error.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [path = directory.path as String] in
            let report = try Self.migrateWithBoundedMemory(path: path)
            FileHandle.standardError.write(Data(report.joined(separator: "\n").utf8))
        }
        let report = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let lines = report.split(separator: "\n").map(String.init)
        print(lines.filter { $0.hasPrefix("measured:") }.joined(separator: "\n"))
        #expect(lines.contains { $0.hasPrefix("measured:") }, Comment(rawValue: report))
        #expect(lines.allSatisfy { $0.hasPrefix("measured:") }, Comment(rawValue: report))
        let check = MigrationSupport.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }

    /// Migrates the store at `path` and returns the measures, then every failure.
    static func migrateWithBoundedMemory(path: String) throws -> [String] {
        let baseline = anonymousMemory()
        let peak = Locked(baseline)
        let chunks = Locked(0)
        let clock = ContinuousClock()
        let start = clock.now
        let container = try ModelContainer(
            for: TodosV3.self, migrationPlan: LargeTodosPlan.self, configuration: MigrationSupport.configuration(path),
            migrationProgress: { _ in
                let memory = anonymousMemory()
                peak.withLock { $0 = max($0, memory) }
                chunks.withLock { $0 += 1 }
            })
        let duration = clock.now - start
        defer { try? container.close() }
        let opened = anonymousMemory()
        let growth = max(peak.withLock { $0 }, opened) - baseline
        var report = [
            "measured: \(recordCount) records in \(chunks.withLock { $0 }) chunks, migrated and indexed in "
                + "\(duration); anonymous memory \(baseline >> 20) MiB before, peak growth \(growth >> 20) MiB"
        ]
        func require(_ condition: Bool, _ failure: @autoclosure () -> String) {
            if !condition { report.append(failure()) }
        }
        let context = ModelContext(container)
        require(try context.fetchCount(FetchDescriptor<TodosV3.Todo>()) == recordCount, "wrong count")
        let state = try MigrationSupport.schemaState(container)
        require(state.version == SchemaVersion(3, 0, 0), "version \(String(describing: state.version))")
        require(state.history.first?.records == recordCount, "history \(state.history)")
        require(chunks.withLock { $0 } >= recordCount / 1000, "only \(chunks.withLock { $0 }) chunks")
        let sample = try context.fetch(FetchDescriptor<TodosV3.Todo>(predicate: #Predicate { $0.title == "item 778" }))
        require(
            sample.map { "\($0.priority) \($0.words)" } == ["1 5"], "item 778 migrated as \(sample)")
        // Well above one chunk of models and LMDB's dirty pages, far below the 1M records (over 100 MiB).
        require(growth < 48 << 20, "anonymous memory grew by \(growth >> 20) MiB")
        return report
    }
}
