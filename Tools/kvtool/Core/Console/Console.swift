import KVStoreInspection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A destination for kvtool's text: standard output or error, a file, or a string in tests.
public protocol TextSink: AnyObject {
    /// Writes `text`, possibly keeping it in a buffer until ``flush()``.
    ///
    /// A write that fails is not thrown at the writer: the sink keeps the ``failure`` and drops later writes, and
    /// kvtool checks it (after each chunk of long work, and after the command).
    func write(_ text: String)

    /// Writes out whatever is buffered.
    func flush()

    /// The first write that failed, if any; later writes were dropped.
    var failure: OutputFailure? { get }
}

extension TextSink {
    /// A sink that cannot fail has no failure.
    public var failure: OutputFailure? { nil }
}

/// A write to one of kvtool's outputs that failed: what was written to, why it failed, and what was left.
///
/// Its message reads `Cannot write to standard output: no space left on the device (ENOSPC): the disk is full; the
/// output is incomplete`.
public struct OutputFailure: Error, Equatable {
    /// What failed, such as `Cannot write to standard output` or `Cannot write 'tasks.jsonl'`.
    public let action: String
    /// Why, from ``SystemError``.
    public let reason: String
    /// What the failure left behind, such as `the output is incomplete`.
    public let aftermath: String

    /// The message kvtool prints after `Error: `.
    public var message: String {
        "\(action): \(reason); \(aftermath)"
    }
}

/// Where a kvtool run writes, and whether a person is watching.
///
/// Commands never print directly: they write to a console, so that tests run them in-process and read what they
/// printed.
///
/// ```swift
/// let output = StringSink()
/// let errors = StringSink()
/// let status = KVTool.run(arguments: ["info", path], console: Console(output: output, errors: errors))
/// ```
public struct Console {
    /// Standard output: the command's results.
    public var output: any TextSink

    /// Standard error: errors, warnings and progress.
    public var errors: any TextSink

    /// Whether standard output is a terminal, which makes `list` print an aligned table.
    public var outputIsTerminal: Bool

    /// Whether standard error is a terminal, which turns on progress lines for long work.
    public var errorsIsTerminal: Bool

    /// Creates a console over two sinks.
    ///
    /// - Parameters:
    ///   - output: Where results go.
    ///   - errors: Where errors, warnings and progress go.
    ///   - outputIsTerminal: Whether `output` is a terminal.
    ///   - errorsIsTerminal: Whether `errors` is a terminal.
    public init(
        output: any TextSink, errors: any TextSink, outputIsTerminal: Bool = false, errorsIsTerminal: Bool = false
    ) {
        self.output = output
        self.errors = errors
        self.outputIsTerminal = outputIsTerminal
        self.errorsIsTerminal = errorsIsTerminal
    }

    /// The process's standard output and standard error.
    public static func standard() -> Console {
        Console(
            output: FileDescriptorSink(descriptor: STDOUT_FILENO),
            errors: FileDescriptorSink(
                descriptor: STDERR_FILENO, bufferSize: 0, name: "to standard error", aftermath: "messages were lost"),
            outputIsTerminal: isatty(STDOUT_FILENO) == 1, errorsIsTerminal: isatty(STDERR_FILENO) == 1)
    }

    /// Writes one line to standard output.
    func print(_ line: String) {
        output.write(line + "\n")
    }

    /// Writes one line to standard error.
    func printError(_ line: String) {
        errors.write(line + "\n")
    }

    /// Throws the failure of standard output, if a write to it failed, so that long work stops early.
    ///
    /// - Throws: ``OutputFailure``.
    func checkOutput() throws(OutputFailure) {
        if let failure = output.failure { throw failure }
    }
}

/// A sink that writes to a file descriptor through a buffer, checking every write.
///
/// Partial and interrupted writes are retried; any other failure (a full disk, a closed pipe) is kept as
/// ``failure`` and drops later writes. SIGPIPE must be ignored for a closed pipe to show as a failed write rather
/// than kill the process: kvtool's executable ignores it.
public final class FileDescriptorSink: TextSink {
    private let descriptor: Int32
    private let bufferSize: Int
    private let name: String
    private let aftermath: String
    private var buffer: [UInt8] = []

    /// The `errno` of the first write that failed, if any.
    public private(set) var errorCode: Int32?

    /// The first write that failed, if any; later writes were dropped.
    public var failure: OutputFailure? {
        errorCode.map {
            OutputFailure(action: "Cannot write \(name)", reason: SystemError.describe($0), aftermath: aftermath)
        }
    }

    /// Creates a sink over an open descriptor, which it does not close.
    ///
    /// - Parameters:
    ///   - descriptor: The descriptor to write to.
    ///   - bufferSize: How many bytes to gather before writing; 0 writes at once.
    ///   - name: What the descriptor is, as a failure's message names it after "Cannot write".
    ///   - aftermath: What a failure leaves, as its message says it.
    public init(
        descriptor: Int32, bufferSize: Int = 64 << 10, name: String = "to standard output",
        aftermath: String = "the output is incomplete"
    ) {
        self.descriptor = descriptor
        self.bufferSize = bufferSize
        self.name = name
        self.aftermath = aftermath
        buffer.reserveCapacity(bufferSize)
    }

    /// Buffers `text`, and writes the buffer out once it is full.
    public func write(_ text: String) {
        guard errorCode == nil else { return }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= bufferSize { flush() }
    }

    /// Writes `bytes` after what is buffered, without copying them into the buffer.
    func write(_ bytes: UnsafeRawBufferPointer) {
        flush()
        writeFully(bytes)
    }

    /// Writes the buffer out.
    public func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { writeFully($0) }
    }

    /// Writes all of `bytes`, retrying interrupted and partial writes, unless a write failed before.
    private func writeFully(_ bytes: UnsafeRawBufferPointer) {
        guard errorCode == nil, let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                errorCode = errno
                return
            }
            // write(2) returns 0 for a non-empty buffer only on devices that take nothing more.
            guard written > 0 else {
                errorCode = EIO
                return
            }
            offset += written
        }
    }
}

/// `write(2)`, which the sinks' own `write` method hides.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
    #elseif canImport(Musl)
        Musl.write(descriptor, bytes, count)
    #elseif canImport(Darwin)
        Darwin.write(descriptor, bytes, count)
    #endif
}

/// A sink that keeps everything written to it, for tests and for commands that build text before printing it.
public final class StringSink: TextSink {
    /// Everything written so far.
    public private(set) var text = ""

    /// Creates an empty sink.
    public init() {}

    /// Appends `text`.
    public func write(_ text: String) {
        self.text += text
    }

    /// Does nothing: the text is already kept.
    public func flush() {}
}
