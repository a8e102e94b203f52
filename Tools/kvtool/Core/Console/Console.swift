#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A destination for kvtool's text: standard output or error, a file, or a string in tests.
public protocol TextSink: AnyObject {
    /// Writes `text`, possibly keeping it in a buffer until ``flush()``.
    func write(_ text: String)

    /// Writes out whatever is buffered.
    func flush()
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
            errors: FileDescriptorSink(descriptor: STDERR_FILENO, bufferSize: 0),
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
}

/// A sink that writes to a file descriptor through a buffer.
public final class FileDescriptorSink: TextSink {
    private let descriptor: Int32
    private let closesDescriptor: Bool
    private let bufferSize: Int
    private var buffer: [UInt8] = []

    /// The `errno` of the first write that failed, if any; later writes are dropped.
    public private(set) var failure: Int32?

    /// Creates a sink over an open descriptor, which it does not close.
    ///
    /// - Parameters:
    ///   - descriptor: The descriptor to write to.
    ///   - bufferSize: How many bytes to gather before writing; 0 writes at once.
    public convenience init(descriptor: Int32, bufferSize: Int = 64 << 10) {
        self.init(descriptor: descriptor, bufferSize: bufferSize, closesDescriptor: false)
    }

    private init(descriptor: Int32, bufferSize: Int, closesDescriptor: Bool) {
        self.descriptor = descriptor
        self.bufferSize = bufferSize
        self.closesDescriptor = closesDescriptor
        buffer.reserveCapacity(bufferSize)
    }

    /// Creates or truncates the file at `path` and returns a sink that writes to it and closes it when released.
    ///
    /// - Throws: ``ToolError`` when the file cannot be created.
    static func creatingFile(atPath path: String) throws(ToolError) -> FileDescriptorSink {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw ToolError("Cannot create '\(path)': \(String(cString: strerror(errno)))")
        }
        return FileDescriptorSink(descriptor: descriptor, bufferSize: 64 << 10, closesDescriptor: true)
    }

    deinit {
        flush()
        if closesDescriptor { close(descriptor) }
    }

    /// Buffers `text`, and writes the buffer out once it is full.
    public func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= bufferSize { flush() }
    }

    /// Writes the buffer out, retrying interrupted and partial writes.
    public func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil, !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
    }
}

/// `write(2)`, which the sinks' own `write` method hides.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
    #else
        Musl.write(descriptor, bytes, count)
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
