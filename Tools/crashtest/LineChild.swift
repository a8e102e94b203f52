import Foundation

/// A child crashtest process whose standard output is read line by line as it comes, for the scenarios that need to
/// know what a child saw commit before it was killed or stopped.
final class LineChild {
    private let process = Process()
    private let output = Pipe()
    private let buffer = LineBuffer()

    /// Starts `crashtest <arguments>`.
    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Child.executablePath)
        process.arguments = arguments
        process.standardOutput = output
        // Standard error joins the lines, so that a child that fails says why in the problem reported.
        process.standardError = output
        do {
            try process.run()
        } catch {
            throw CrashTestError("Cannot start a child crashtest: \(error.localizedDescription)")
        }
        let (handle, buffer) = (output.fileHandleForReading, buffer)
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    buffer.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            buffer.finish()
        }
    }

    /// The lines written so far.
    var lines: [String] {
        buffer.snapshot.lines
    }

    /// The UUIDs of the `saved <uuid>` lines so far: the saves the child saw commit.
    var acknowledged: [UUID] {
        lines.compactMap { $0.hasPrefix("saved ") ? UUID(uuidString: String($0.dropFirst(6))) : nil }
    }

    /// Waits until a line satisfies `matches` or the output ends, for at most a minute.
    func waitForLine(where matches: (String) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let (lines, finished) = buffer.snapshot
            if lines.contains(where: matches) { return true }
            if finished { return false }
            usleep(1_000)
        }
        return false
    }

    /// Whether the child ends within `timeout`.
    func ends(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            usleep(1_000)
        }
        return true
    }

    /// Kills the child with SIGKILL and waits for it to end.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        // `waitUntilExit` looks every 50 ms; `isRunning` turns false as soon as the child is reaped.
        _ = ends(within: .seconds(60))
        process.waitUntilExit()
    }

    /// Waits for the child to end and its output to be read, and tells how it ended: `exit <status>` or
    /// `signal <number>`.
    func waitForExit() -> String {
        while process.isRunning { usleep(1_000) }
        process.waitUntilExit()
        _ = waitForLine { _ in false }
        switch process.terminationReason {
        case .exit: return "exit \(process.terminationStatus)"
        case .uncaughtSignal: return "signal \(process.terminationStatus)"
        @unknown default: return "status \(process.terminationStatus)"
        }
    }

    /// Writes one line on standard output at once, for the parent.
    static func report(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// The lines a child wrote so far, shared by the thread that reads them and the parent.
private final class LineBuffer: @unchecked Sendable {
    // @unchecked Sendable: `state` is only read and written under `lock`.
    private let lock = NSLock()
    private var state: (lines: [String], finished: Bool) = ([], false)

    func append(_ line: String) {
        lock.withLock { state.lines.append(line) }
    }

    func finish() {
        lock.withLock { state.finished = true }
    }

    var snapshot: (lines: [String], finished: Bool) {
        lock.withLock { state }
    }
}
