import Foundation
import LMDB
import TestSupport

/// A `ReplicationHelper` child process, built beside the test bundle, with its standard output read line by line.
final class HelperProcess: Sendable {
    /// The lines read so far, and whether the output ended, shared with the reading thread.
    private final class Output: Sendable {
        let state = Locked<(lines: [String], finished: Bool)>(([], false))
    }

    private let process: Process
    private let output = Output()

    /// Starts `ReplicationHelper <arguments>`.
    init(_ arguments: [String]) throws {
        let process = Process()
        self.process = process
        let pipe = Pipe()
        process.executableURL = try builtExecutable(named: "ReplicationHelper")
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let handle = pipe.fileHandleForReading
        let output = self.output
        let reader = Thread {
            var pending = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    output.state.withLock { $0.lines.append(line) }
                }
            }
            output.state.withLock { $0.finished = true }
        }
        try process.run()
        reader.start()
    }

    /// The lines written so far.
    var lines: [String] {
        output.state.withLock { $0.lines }
    }

    /// The positions of the `<word> <position>` lines so far.
    func positions(_ word: String) -> [UInt64] {
        lines.compactMap { line in line.hasPrefix(word + " ") ? UInt64(line.dropFirst(word.count + 1)) : nil }
    }

    /// Waits until `lines` has `count` lines or more, the output ends, or `timeout` passes.
    func waitForLines(_ count: Int, timeout: Duration = .seconds(60)) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (lines, finished) = output.state.withLock { ($0.lines, $0.finished) }
            if lines.count >= count || finished { return }
            usleep(500)
        }
    }

    /// Kills the child with SIGKILL and waits for it to end.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the child to end, and tells how: `exit <status>` or `signal <number>`.
    func waitForExit() -> String {
        process.waitUntilExit()
        while !output.state.withLock({ $0.finished }) { usleep(1_000) }
        return process.terminationReason == .exit
            ? "exit \(process.terminationStatus)" : "signal \(process.terminationStatus)"
    }
}
