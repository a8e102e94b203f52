#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads a file or standard input line by line through a fixed buffer, so that memory holds one line at a time
/// whatever the size of the file.
final class LineReader {
    private let descriptor: Int32
    private let closesDescriptor: Bool
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var isAtEnd = false

    /// Opens `path` for reading; `-` is standard input.
    ///
    /// - Throws: ``ToolError`` when the file cannot be opened.
    init(path: String) throws(ToolError) {
        if path == "-" {
            descriptor = STDIN_FILENO
            closesDescriptor = false
        } else {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw ToolError("Cannot open '\(path)': \(String(cString: strerror(errno)))") }
            closesDescriptor = true
        }
        buffer = [UInt8](repeating: 0, count: 64 << 10)
    }

    deinit {
        if closesDescriptor { close(descriptor) }
    }

    /// The next line without its line break (`\n` or `\r\n`), or `nil` at the end of the input.
    ///
    /// - Throws: ``ToolError`` when reading fails.
    func nextLine() throws(ToolError) -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            if let newline = buffer[start..<end].firstIndex(of: 0x0A) {
                line.append(contentsOf: buffer[start..<newline])
                start = newline + 1
                if line.last == 0x0D { line.removeLast() }
                return line
            }
            line.append(contentsOf: buffer[start..<end])
            start = 0
            end = 0
            if isAtEnd { return line.isEmpty ? nil : line }
            try fill()
        }
    }

    private func fill() throws(ToolError) {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ToolError("Cannot read the input: \(String(cString: strerror(errno)))")
            }
            end = count
            isAtEnd = count == 0
            return
        }
    }
}
