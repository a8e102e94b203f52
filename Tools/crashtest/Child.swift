import Foundation

/// A child crashtest process: the same executable, started with a hidden subcommand, that writes a line on its
/// standard output once it is ready to be killed.
final class Child {
    private let process = Process()
    private let output = Pipe()

    /// The child's process ID.
    var processID: Int32 {
        process.processIdentifier
    }

    /// Starts `crashtest <arguments>`.
    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Self.executablePath)
        process.arguments = arguments
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw CrashTestError("Cannot start a child crashtest: \(error.localizedDescription)")
        }
    }

    /// Waits for the child's ready line; `false` when it ended first.
    func waitUntilReady() -> Bool {
        var received = Data()
        while !received.contains(UInt8(ascii: "\n")) {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { return false }
            received.append(data)
        }
        return true
    }

    /// Kills the child with SIGKILL and waits for it to end.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        // `waitUntilExit` looks every 50 ms; `isRunning` turns false as soon as the child is reaped.
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && ContinuousClock.now < deadline { usleep(1_000) }
        process.waitUntilExit()
    }

    /// How the child ended, once it has: "killed" for SIGKILL, otherwise its status or signal.
    var ending: String {
        switch process.terminationReason {
        case .uncaughtSignal where process.terminationStatus == SIGKILL: "killed"
        case .uncaughtSignal: "signal \(process.terminationStatus)"
        case .exit: "exit status \(process.terminationStatus)"
        @unknown default: "status \(process.terminationStatus)"
        }
    }

    /// The path of the running binary, resolved, or the path it was started with.
    static let executablePath: String = {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 {
            return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return CommandLine.arguments.first ?? "crashtest"
    }()

    /// Tells the parent the child is ready: one line on standard output.
    static func signalReady() {
        FileHandle.standardOutput.write(Data("ready\n".utf8))
    }
}
