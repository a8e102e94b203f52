import Foundation
import KVStore
import TestSupport
import Testing

/// The README's kvtool section shows commands and what they print. Each command block marked
/// `<!-- kvtool example -->` is run here, in order, through a shell in one directory holding the README's store,
/// with the built kvtool in place of `swift run kvtool`; what the block's commands print, standard output and
/// standard error together, must be the output block that follows it, byte for byte.
@Suite struct ReadmeKVToolExampleTests {
    /// The README's projects, written with the README's IDs and dates.
    struct ReadmeProject: Model {
        var id: UUID
        var name: String
        var createdAt: Date

        static let entity = Entity<ReadmeProject>(
            name: "Project", indexes: [.unique(\.name)],
            relationships: [.toMany("tasks", of: ReadmeTask.self, inverse: \.projectID, deleteRule: .cascade)])
    }

    /// The README's tasks.
    struct ReadmeTask: Model {
        var id: UUID
        var title: String
        var isDone = false
        var dueDate: Date?
        var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
        var projectID: UUID?

        static let entity = Entity<ReadmeTask>(
            name: "Task", relationships: [.toOne("project", \.projectID, to: ReadmeProject.self, inverse: "tasks")])
    }

    /// One marked command block and the output block after it.
    struct Example {
        /// The command lines, `swift run kvtool` included.
        var commands: [String]
        /// The output block's text, with its final newline.
        var output: String
    }

    /// Writes `tasks.store` in `directory` as the README's section describes it: two projects, four tasks.
    static func writeStore(in directory: String) throws {
        func id(_ text: String) throws -> UUID { try #require(UUID(uuidString: text)) }
        let inbox = try id("01A22E0A-CBE2-720A-8BE5-CE233BB31DA0")
        let garden = try id("01A22E0A-CBE2-720B-931C-E3A5F346E0DF")
        let container = try ModelContainer(
            for: ReadmeProject.self, ReadmeTask.self,
            configuration: ModelConfiguration(path: directory + "/tasks.store"))
        let context = ModelContext(container)
        context.insert(
            ReadmeProject(id: inbox, name: "Inbox", createdAt: Date(timeIntervalSinceReferenceDate: 800_050_000)))
        context.insert(
            ReadmeProject(id: garden, name: "Garden", createdAt: Date(timeIntervalSinceReferenceDate: 800_100_000)))
        context.insert(
            ReadmeTask(
                id: try id("01A22E0A-CBE2-720C-AC66-AC153E4F78A9"), title: "Write the report",
                dueDate: Date(timeIntervalSinceReferenceDate: 800_600_000), projectID: inbox))
        context.insert(
            ReadmeTask(
                id: try id("01A22E0A-CBE2-720D-9B2B-C50B32ECAB87"), title: "Plant tulips", isDone: true,
                projectID: garden))
        context.insert(
            ReadmeTask(
                id: try id("01A22E0A-CBE2-720E-B521-711E9DE51DCA"), title: "Water the roses",
                dueDate: Date(timeIntervalSinceReferenceDate: 800_172_800.5), projectID: garden))
        context.insert(ReadmeTask(id: try id("01A22E0A-CBE2-720F-8E3A-9F35C4DF3DAC"), title: "Call Ada"))
        try context.save()
        try container.close()
    }

    /// The marked examples of README.md, in order.
    static func examples() throws -> [Example] {
        let root = packageRoot(of: #filePath)
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var examples: [Example] = []
        var index = 0
        /// The lines of the fenced block opening at `index` (which must be `fence`), and the index after it.
        func block(opening fence: String) throws -> [String] {
            try #require(index < lines.count && lines[index] == fence, "expected \(fence) at line \(index + 1)")
            let end = try #require(lines[(index + 1)...].firstIndex(of: "```"), "unclosed block at \(index + 1)")
            defer { index = end + 1 }
            return Array(lines[(index + 1)..<end])
        }
        while index < lines.count {
            guard lines[index] == "<!-- kvtool example -->" else {
                index += 1
                continue
            }
            index += 1
            let commands = try block(opening: "```sh")
            let output = try block(opening: "```")
            examples.append(Example(commands: commands, output: output.map { $0 + "\n" }.joined()))
        }
        return examples
    }

    /// Runs one command line through `/bin/sh` in `directory`, with kvtool's directory first in `PATH`, and returns
    /// what it printed on either stream.
    static func run(_ command: String, in directory: String, kvtool: URL) throws -> String {
        try #require(command.contains("swift run kvtool "), "not a kvtool command: \(command)")
        let line = command.replacingOccurrences(of: "swift run kvtool ", with: "kvtool ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec 2>&1; " + line]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = kvtool.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func theMarkedExamplesPrintWhatTheReadmeShows() throws {
        let examples = try Self.examples()
        // schema, the table, list and count, conditions and aggregates, get --follow, export to copy, the safety rules.
        #expect(examples.count == 7)
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        try Self.writeStore(in: store.path)
        let kvtool = try BinarySmokeTests.executable()
        for example in examples {
            let printed = try example.commands.map { try Self.run($0, in: store.path, kvtool: kvtool) }.joined()
            #expect(printed == example.output, "README example \(example.commands.joined(separator: "; "))")
        }
    }
}
