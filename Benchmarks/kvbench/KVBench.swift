import CommandLineKit
import Foundation

/// The kvbench command: parses options, runs the scenarios and writes the report.
enum KVBench {
    /// Runs kvbench with `arguments` (without the program's name) and returns the exit status: 0, 1 when a
    /// scenario fails, 64 for a usage error.
    static func main(_ arguments: [String]) -> Int32 {
        if arguments.first == ChildProcess.flag {
            return ChildProcess.main(Array(arguments.dropFirst()))
        }
        if arguments.first == InstructionCheck.flag {
            return InstructionCheck.main(Array(arguments.dropFirst()))
        }
        if arguments.first == InstructionCheck.workloadFlag {
            return InstructionCheck.child(Array(arguments.dropFirst()))
        }
        let options: Options
        do {
            switch try Options.parse(arguments) {
            case .help(let text), .version(let text):
                print(text, terminator: "")
                return ExitCode.success.rawValue
            case .run(let parsed):
                options = parsed
            }
        } catch {
            FileHandle.standardError.write(Data(Options.usageReport(error).utf8))
            return ExitCode.usage.rawValue
        }
        do {
            try run(options, subject: Subjects.current)
            return ExitCode.success.rawValue
        } catch {
            printError("Error: \(error)")
            return ExitCode.failure.rawValue
        }
    }

    private static func run<Subject: ScenarioSubject>(_ options: Options, subject: Subject.Type) throws {
        let start = Clock.nanoseconds()
        var sizes = ScenarioSizes(options.size)
        if let chunkSize = options.chunkSize { sizes.chunkSize = chunkSize }
        let machine = Machine.current()
        if !machine.optimizedBuild {
            printError("kvbench: warning: this is a debug build; build with -c release to measure anything")
        }
        let context = ScenarioContext(options: options, sizes: sizes, workspace: try Workspace())
        var results: [ScenarioResult] = []
        for kind in options.scenarios {
            results += try kind.scenario.run(Subject.self, in: context)
        }
        let report = Report(
            machine: machine,
            settings: Report.Settings(
                size: options.size, repeats: options.repeats, durability: options.durability, coding: options.coding,
                scenarios: options.scenarios, subject: Subject.name, baseline: RawLMDB.name,
                seed: ScenarioContext.seed, sizes: sizes, averageTaskBytes: try averageTaskBytes()),
            results: results, wallSeconds: Double(Clock.nanoseconds() - start) / 1e9, blackHole: BlackHole.total)
        print(report.header)
        print()
        print(report.table)
        print(String(format: "\nwall time: %.1f s", report.wallSeconds))
        if let path = options.jsonPath {
            try write("JSON", to: path) { try report.writeJSON(to: path) }
        }
        if let path = options.svgPath {
            try write("SVG", to: path) { try SVGChart(report: report).write(to: path) }
        }
    }

    /// The average size of an encoded task, from a sample of the generated data.
    private static func averageTaskBytes() throws -> Double {
        let sample = try Dataset(projectCount: 1_000, seed: ScenarioContext.seed).taskBytes
        return Double(sample.byteCount) / Double(max(sample.count, 1))
    }

    private static func write(_ kind: String, to path: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            throw ReportError(description: "Cannot write the \(kind) report to \(path): \(error.localizedDescription)")
        }
        printError("kvbench: wrote \(path)")
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// A report that could not be written.
struct ReportError: Error, CustomStringConvertible {
    /// What failed.
    var description: String
}
