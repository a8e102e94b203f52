import Foundation
import TestSupport
import Testing

/// The built `kvtool` executable runs: the thin `main` reaches the same code as the in-process tests.
@Suite struct BinarySmokeTests {
    /// The executable named `name` (`kvtool` by default) beside the test bundle in the build directory.
    static func executable(named name: String = "kvtool") throws -> URL {
        try builtExecutable(named: name)
    }

    /// Runs the executable (`kvtool` by default) and returns its exit status, standard output and standard error.
    static func run(_ arguments: [String], executable name: String = "kvtool") throws -> RunResult {
        let process = Process()
        process.executableURL = try executable(named: name)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return RunResult(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData, as: UTF8.self))
    }

    @Test func versionAndInfoRunInTheBuiltBinary() throws {
        #expect(
            try Self.run(["--version"]) == RunResult(status: 0, output: "kvtool 0.1.0 (KVStore format 4)\n", errors: "")
        )
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let info = try Self.run(["info", store.path])
        #expect(info.status == 0)
        #expect(info.errors == "")
        #expect(info.output.hasPrefix("Path              \(store.path)\nFormat version    2\nSchema version    none\n"))
        #expect(info.output.contains("\nrecords/Task                4      1      1\n"))
        let missing = try Self.run(["count", store.path])
        #expect(missing.status == 64)
        #expect(missing.errors.hasPrefix("Error: Missing expected argument '<entity>'\n"))
    }

    @Test func historyAndAnIncrementalExportRunInTheBuiltBinary() throws {
        let store = TemporaryStore()
        let id = try HistoryCommandTests.makeStore(at: store.path).storeID
        let history = try Self.run(["history", store.path, "--json"])
        #expect(history.status == 0)
        #expect(history.errors == "")
        #expect(history.output.split(separator: "\n").count == 4)
        let export = try Self.run(["export", store.path, "--since", "\(id):2"])
        #expect(export.status == 0)
        #expect(export.output.split(separator: "\n").count == 5, "the header, 3 delete lines, the end line")
        #expect(export.errors.hasPrefix("The export goes through history token \(id):4: "))
    }
}
