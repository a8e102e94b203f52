import Foundation

/// Runs a scale point in a fresh kvbench process, so that its peak resident set size is its own.
///
/// The parent re-executes its own binary (`/proc/self/exe`) with the hidden arguments `--child scale <point>`,
/// where `<point>` is the ``ScalePoint`` as JSON; the child prints its ``ScalePoint/Outcome`` as JSON on standard
/// output and leaves standard error to its parent's.
enum ChildProcess {
    /// The hidden first argument of a child.
    static let flag = "--child"

    /// A child that failed or printed something else than a measurement.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        var description: String
    }

    /// Does one run of `point` in a child process.
    ///
    /// - Throws: ``Failure`` when the child cannot start, fails, or prints no measurement.
    static func measure(_ point: ScalePoint) throws -> ScalePoint.Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        process.arguments = [flag, "scale", String(decoding: try JSONEncoder().encode(point), as: UTF8.self)]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw Failure(description: "Cannot start a child kvbench: \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw Failure(
                description: "The child kvbench for \(point.count) \(point.order.rawValue) tasks (\(point.side)) "
                    + "failed with status \(process.terminationStatus)")
        }
        do {
            return try JSONDecoder().decode(ScalePoint.Outcome.self, from: data)
        } catch {
            throw Failure(description: "The child kvbench printed no measurement: \(error)")
        }
    }

    /// The child's side, when the first argument is ``flag``.
    ///
    /// - Parameter arguments: The arguments after ``flag``.
    /// - Returns: The exit status: 0, 1 when the measurement failed, 64 for bad arguments.
    static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, arguments[0] == "scale",
            let point = try? JSONDecoder().decode(ScalePoint.self, from: Data(arguments[1].utf8))
        else {
            FileHandle.standardError.write(Data("Error: bad arguments for a child kvbench\n".utf8))
            return 64
        }
        do {
            let outcome = try point.measure(Subjects.current)
            FileHandle.standardOutput.write(try JSONEncoder().encode(outcome) + Data("\n".utf8))
            return 0
        } catch {
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            return 1
        }
    }

    /// The path of the running binary, resolved, or the path it was started with.
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 {
            return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return CommandLine.arguments.first ?? "kvbench"
    }
}
