import Foundation

/// The seed corpus of a fuzz target: valid inputs made by the real encoders, written when the target runs with
/// `--generate-corpus <directory>` instead of fuzzing.
///
/// libFuzzer's `main` calls `LLVMFuzzerInitialize` with the command line before it fuzzes; each target's calls
/// ``writeIfRequested(arguments:seeds:)`` there. libFuzzer ignores options that start with `--`.
///
/// ```swift
/// @_cdecl("LLVMFuzzerInitialize")
/// public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: Corpus.Arguments) -> CInt {
///     Corpus.writeIfRequested(arguments: Corpus.arguments(argc, argv)) { [[1, 2, 3]] }
///     return 0
/// }
/// ```
public enum Corpus {
    /// The type of libFuzzer's `argv` in `LLVMFuzzerInitialize`.
    public typealias Arguments = UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>

    /// The command line libFuzzer passes to `LLVMFuzzerInitialize`, program name included.
    public static func arguments(_ argc: UnsafeMutablePointer<CInt>, _ argv: Arguments) -> [String] {
        (0..<Int(argc.pointee)).compactMap { argv.pointee[$0].map { String(cString: $0) } }
    }

    /// When `arguments` hold `--generate-corpus <directory>`, writes each seed to its own file in the directory,
    /// created if needed, and exits; otherwise returns.
    ///
    /// Failures print a message and exit with status 1.
    public static func writeIfRequested(arguments: [String], seeds: () throws -> [[UInt8]]) {
        guard let flag = arguments.firstIndex(of: "--generate-corpus") else { return }
        guard flag + 1 < arguments.count else { fail("--generate-corpus needs a directory") }
        let directory = arguments[flag + 1]
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let all = try seeds()
            for (number, seed) in all.enumerated() {
                let name = directory + "/seed-" + String(number + 1).leftPadded(to: 4)
                try Data(seed).write(to: URL(fileURLWithPath: name))
            }
            print("Wrote \(all.count) seeds to \(directory).")
            exit(0)
        } catch {
            fail("cannot write the corpus to \(directory): \(error)")
        }
    }

    /// Prints `message` to standard error and exits with status 1.
    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("fuzz: \(message)\n".utf8))
        exit(1)
    }
}

extension String {
    /// The string with zeros in front, up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
