import Foundation
import TestSupport
import Testing

/// Reference models and their contexts are not `Sendable`, as SwiftData's: the compiler rejects every way of sharing
/// them across tasks or actors, and accepts passing IDs. Each case compiles a small program against the KVStore module
/// this test run built, with the toolchain's `swiftc`, and expects exactly the errors the documentation shows.
@Suite struct ConcurrencyDiagnosticsTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let code: String
        /// The errors expected, by message, without the diagnostic group that follows it.
        let errors: [String]
        var testDescription: String { name }
    }

    static let model = """
        import Foundation
        import KVStore

        final class Note: PersistentModel {
            var id = UUID.timeOrdered()
            var title = ""
            static let entity = Entity<Note>()
        }

        """

    static let cases: [Case] = [
        Case(
            name: "an object sent to another task",
            code: """
                func share(_ context: ModelContext) async throws {
                    let note = try context.fetch(FetchDescriptor<Note>())[0]
                    await Task.detached { print(note.title) }.value
                }
                """,
            errors: [
                "passing closure as a 'sending' parameter risks causing data races between code in the current task "
                    + "and concurrent execution of the closure"
            ]),
        Case(
            name: "an object passed to another actor",
            code: """
                actor Worker {
                    func take(_ note: Note) {}
                }
                func send(_ context: ModelContext, to worker: Worker) async throws {
                    let note = try context.fetch(FetchDescriptor<Note>())[0]
                    await worker.take(note)
                }
                """,
            errors: ["sending 'note' risks causing data races"]),
        Case(
            name: "an object returned from a model actor",
            code: """
                func fetchElsewhere(_ id: UUID, container: ModelContainer) async throws -> Note? {
                    try await ModelActor(modelContainer: container).perform { try $0.model(for: id, as: Note.self) }
                }
                """,
            errors: ["type 'Note' does not conform to the 'Sendable' protocol"]),
        Case(
            name: "a context sent to another task",
            code: """
                func contextAcross(_ context: ModelContext) async {
                    await Task.detached { _ = context.hasChanges }.value
                }
                """,
            errors: [
                "passing closure as a 'sending' parameter risks causing data races between code in the current task "
                    + "and concurrent execution of the closure"
            ]),
        Case(
            name: "the main context off the main actor",
            code: """
                func nonisolatedRead(_ container: ModelContainer) throws -> Int {
                    try container.mainContext.fetchCount(FetchDescriptor<Note>())
                }
                """,
            errors: ["main actor-isolated property 'mainContext' can not be referenced from a nonisolated context"]),
        Case(
            name: "IDs across actors, objects on their context's actor",
            code: """
                func markDone(_ id: UUID, container: ModelContainer) async throws {
                    try await ModelActor(modelContainer: container).perform { context in
                        try context.model(for: id, as: Note.self)?.title = "done"
                        try context.save()
                    }
                }
                @MainActor func rename(_ id: UUID, container: ModelContainer) throws {
                    try container.mainContext.model(for: id, as: Note.self)?.title = "renamed"
                    try container.mainContext.save()
                }
                """,
            errors: []),
    ]

    @Test(arguments: cases)
    func theCompilerSaysWhatTheDocumentationShows(_ snippet: Case) throws {
        let errors = try Self.compile(Self.model + snippet.code)
        #expect(errors == snippet.errors)
        let article = try String(
            contentsOf: packageRoot(of: #filePath).appendingPathComponent(
                "Sources/KVStore/KVStore.docc/ReferenceModels.md"),
            encoding: .utf8)
        for error in snippet.errors {
            #expect(article.contains("error: " + error), "the article does not show \(error)")
        }
    }

    /// Compiles `code` as one file against the KVStore module beside the running tests, as far as the checks of
    /// concurrency (which run on SIL), and returns the messages of its errors.
    static func compile(_ code: String) throws -> [String] {
        let build = try buildDirectory()
        let root = packageRoot(of: #filePath)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kvstore-diagnostics-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("snippet.swift")
        try code.write(to: source, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "swiftc", "-emit-sil", "-o", "/dev/null", "-swift-version", "6",
            "-I", build.appendingPathComponent("Modules").path,
            "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/CLMDB/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CCRC32C.build/module.modulemap").path,
            source.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let errors = text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix(source.path + ":"), let range = line.range(of: ": error: ") else { return nil }
            let message = line[range.upperBound...]
            return String(message.components(separatedBy: " [#").first ?? String(message))
        }
        if errors.isEmpty && process.terminationStatus != 0 {
            Issue.record("swiftc failed without an error on the snippet:\n\(text)")
        }
        return errors
    }

    /// The directory of the running test bundle, which holds the modules it was built with.
    static func buildDirectory() throws -> URL {
        let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])].compactMap { $0 }
        for candidate in candidates {
            var directory = candidate.deletingLastPathComponent()
            for _ in 0..<3 {
                let module = directory.appendingPathComponent("Modules/KVStore.swiftmodule")
                if FileManager.default.fileExists(atPath: module.path) { return directory }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw CocoaError(
            .fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Modules/KVStore.swiftmodule near \(candidates)"])
    }
}
