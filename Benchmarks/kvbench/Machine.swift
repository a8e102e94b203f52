import CLMDB
import Foundation

/// The machine and software a run measured, printed above the table and stored in the JSON report.
struct Machine: Codable, Sendable {
    /// The number of processors available to the process (what `nproc` prints).
    var processors: Int
    /// The processor model from `/proc/cpuinfo`.
    var cpuModel: String
    /// The operating system from `/etc/os-release`.
    var operatingSystem: String
    /// The kernel release.
    var kernel: String
    /// The physical memory in bytes.
    var memoryBytes: UInt64
    /// The Swift compiler that built kvbench.
    var swiftVersion: String
    /// The LMDB library kvbench runs with.
    var lmdbVersion: String
    /// Whether this is an optimized build; debug builds measure nothing useful.
    var optimizedBuild: Bool

    /// Describes the current machine.
    static func current() -> Machine {
        Machine(
            processors: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: field("model name", in: "/proc/cpuinfo", separator: ":") ?? "unknown",
            operatingSystem: field("PRETTY_NAME", in: "/etc/os-release", separator: "=")?
                .trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "unknown",
            kernel: kernelRelease(),
            memoryBytes: ProcessInfo.processInfo.physicalMemory,
            swiftVersion: compilerVersion,
            lmdbVersion: String(cString: mdb_version(nil, nil, nil)),
            optimizedBuild: isOptimized)
    }

    /// The first value of `key` in a `key<separator>value` file, trimmed.
    private static func field(_ key: String, in path: String, separator: Character) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: separator, maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == key {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    private static func kernelRelease() -> String {
        var names = utsname()
        uname(&names)
        return withUnsafeBytes(of: names.release) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static var isOptimized: Bool {
        #if DEBUG
            false
        #else
            true
        #endif
    }

    /// The compiler's version, as precise as `#if compiler` can tell it.
    private static var compilerVersion: String {
        #if compiler(>=6.4)
            "6.4 or later"
        #elseif compiler(>=6.3.2)
            "6.3.2"
        #elseif compiler(>=6.3.1)
            "6.3.1"
        #elseif compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #elseif compiler(>=6.1)
            "6.1"
        #else
            "6.0"
        #endif
    }

    /// The machine as lines of `name: value`.
    var summary: String {
        """
        machine:  \(processors) processors, \(cpuModel), \(memoryBytes >> 20) MiB
        system:   \(operatingSystem), kernel \(kernel)
        software: Swift \(swiftVersion)\(optimizedBuild ? "" : " (DEBUG BUILD: numbers are meaningless)"), \
        \(lmdbVersion)
        """
    }
}
