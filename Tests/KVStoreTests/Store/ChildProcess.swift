import Foundation
import LMDB
import TestSupport

/// A child process of the multi-process tests: the `SharingHelper` executable, built beside the test bundle, with
/// its standard output read line by line as it comes.
final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: `lines` and `finished` sit behind `state`'s lock; the process and pipe are only started
    // and waited for.
    private let process = Process()
    private let output = Pipe()
    private let state = Locked<(lines: [String], finished: Bool)>(([], false))
    private let reader: Thread

    /// Starts `SharingHelper <arguments>` with `environment` added to this process's.
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = try builtExecutable(named: "SharingHelper")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let handle = output.fileHandleForReading
        let state = self.state
        reader = Thread {
            var pending = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    state.withLock { $0.lines.append(line) }
                }
            }
            state.withLock { $0.finished = true }
        }
        try process.run()
        reader.start()
    }

    /// The lines written so far.
    var lines: [String] {
        state.withLock { $0.lines }
    }

    /// The UUIDs of the `saved <uuid>` lines so far: the saves the child saw commit.
    var acknowledged: [UUID] {
        lines.compactMap { line in line.hasPrefix("saved ") ? UUID(uuidString: String(line.dropFirst(6))) : nil }
    }

    /// Waits until a line satisfies `matches`, or the output ends, or `timeout` passes.
    ///
    /// - Returns: Whether such a line came.
    @discardableResult
    func waitForLine(timeout: Duration = .seconds(60), where matches: (String) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (lines, finished) = state.withLock { ($0.lines, $0.finished) }
            if lines.contains(where: matches) { return true }
            if finished { return false }
            usleep(1_000)
        }
        return false
    }

    /// Waits for the line `line` exactly.
    @discardableResult
    func waitFor(_ line: String, timeout: Duration = .seconds(60)) -> Bool {
        waitForLine(timeout: timeout) { $0 == line }
    }

    /// Whether the process has not exited yet.
    var isRunning: Bool {
        process.isRunning
    }

    /// Kills the child with SIGKILL and waits for it to end.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the child to end, and tells how: `exit <status>` or `signal <number>`.
    func waitForExit() -> String {
        process.waitUntilExit()
        while !state.withLock({ $0.finished }) { usleep(1_000) }
        switch process.terminationReason {
        case .exit: return "exit \(process.terminationStatus)"
        case .uncaughtSignal: return "signal \(process.terminationStatus)"
        @unknown default: return "status \(process.terminationStatus)"
        }
    }
}
