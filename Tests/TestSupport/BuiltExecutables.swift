import Foundation

/// A product of the package built beside the running test bundle (a child-process helper, kvtool): the executable
/// named `name` in the bundle's directory or up to two directories above it.
///
/// - Throws: `CocoaError.fileNoSuchFile` naming the places searched when there is none.
public func builtExecutable(named name: String) throws -> URL {
    let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])].compactMap { $0 }
    for candidate in candidates {
        var directory = candidate.deletingLastPathComponent()
        for _ in 0..<3 {
            let binary = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
            directory = directory.deletingLastPathComponent()
        }
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(name) beside \(candidates)"])
}
