import Foundation
import NATSTestSupport
import Testing

/// `replicate-publish` and `replicate-follow` without `--once`, in the built binary: they work until SIGINT or
/// SIGTERM, then stop cleanly, exit with 0 and say what they did.
@Suite(.requiresNATSServer, .serialized)
struct ReplicateSignalTests {
    /// A kvtool process, its standard output and error written to files beside the test's stores.
    final class Child {
        private let process = Process()
        private let outputPath: String
        private let errorsPath: String

        /// Starts `kvtool <arguments>`, its outputs in `<prefix>.out` and `<prefix>.err`.
        init(_ arguments: [String], outputs prefix: String) throws {
            outputPath = prefix + ".out"
            errorsPath = prefix + ".err"
            for path in [outputPath, errorsPath] {
                try #require(FileManager.default.createFile(atPath: path, contents: nil))
            }
            process.executableURL = try BinarySmokeTests.executable()
            process.arguments = arguments
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorsPath))
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        /// What it wrote to standard output so far.
        var output: String {
            (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        }

        /// What it wrote to standard error so far.
        var errors: String {
            (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        }

        /// Sends `signal`.
        func send(_ signal: Int32) {
            kill(process.processIdentifier, signal)
        }

        /// Waits up to 10 seconds for the process to end, and returns its exit status; `nil` when it did not end, or
        /// a signal ended it.
        func exitStatus() async -> Int32? {
            guard await eventually(timeout: .seconds(10), { !process.isRunning }) else { return nil }
            return process.terminationReason == .exit ? process.terminationStatus : nil
        }
    }

    @Test func followAppliesWhatArrivesUntilSIGTERM() async throws {
        let setup = try ReplicationSetup()
        let replica = try setup.copyOfPrimary(named: "replica")
        #expect(setup.replicate("publish", setup.primary.path, "--create-stream", "--once").status == 0)
        let child = try Child(["replicate-follow", replica] + setup.connection, outputs: setup.sibling("follow"))
        #expect(await eventually { child.errors.contains("Following the stream 'ORDERS' into '\(replica)'") })
        try setup.commit(3)
        #expect(setup.replicate("publish", setup.primary.path, "--once").status == 0)
        let token = setup.token(5)
        #expect(await eventually { child.errors.contains(", through \(token).\n") }, "\(child.errors)")
        child.send(SIGTERM)
        #expect(await child.exitStatus() == 0)
        #expect(child.output == "Stopped by SIGTERM: applied 3 commits from the stream 'ORDERS', through \(token).\n")
        #expect(!child.errors.contains("warning") && !child.errors.contains("Error"), "\(child.errors)")
        #expect(try HistoryTesting.exportedModels(replica) == HistoryTesting.exportedModels(setup.primary.path))
    }

    @Test func publishPublishesEachCommitUntilSIGINT() async throws {
        let setup = try ReplicationSetup()
        let child = try Child(
            ["replicate-publish", setup.primary.path, "--create-stream"] + setup.connection,
            outputs: setup.sibling("publish"))
        #expect(
            await eventually { child.errors.contains("through \(setup.token(2)) (2 messages published).") },
            "\(child.errors)")
        // The program commits while the publisher runs.
        try setup.commit(2)
        #expect(
            await eventually { child.errors.contains("through \(setup.token(4)) (4 messages published).") },
            "\(child.errors)")
        child.send(SIGINT)
        #expect(await child.exitStatus() == 0)
        #expect(
            child.output
                == "Stopped by SIGINT: published 4 messages to the stream 'ORDERS', through \(setup.token(4)).\n")
        #expect(
            child.errors.hasPrefix(
                """
                Created the stream 'ORDERS' (subject kvstore.history.ORDERS, 1 replica).
                Publishing the history of '\(setup.primary.path)' to the stream 'ORDERS' (subject \
                kvstore.history.ORDERS); stop with SIGINT (Ctrl-C) or SIGTERM.

                """))
        // What it published is what a replica needs.
        let replica = setup.sibling("replica")
        #expect(kvtool("copy", setup.primary.path, replica).status == 0)
        #expect(
            setup.replicate("follow", replica, "--once").output
                == "Applied 0 commits from the stream 'ORDERS', through \(setup.token(4)).\n")
    }
}
