import KVStoreInspection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a file or standard input line by line through a fixed buffer, so that memory holds one line at a time
/// whatever the size of the file.
///
/// It counts the bytes it consumed, so that a line's offset can be recorded and the file read again from there
/// (``seek(to:)``), and hashes every byte it reads (``fingerprint``), so that a second reading can tell it is the same
/// input. A copy of the input can be written as it is read (``copy``), for standard input, which cannot be read twice.
final class LineReader {
    /// The longest line read: longer ones are refused rather than held in memory whole. An export's longest lines
    /// are its chunk lines, a third longer than the chunk they hold.
    static let maximumLineLength = 128 << 20

    private let descriptor: Int32
    private let closesDescriptor: Bool
    private let name: String
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var isAtEnd = false
    /// The offset in the input of `buffer[end]`.
    private var readOffset = 0
    private var hash = Fingerprint()
    /// Where each byte read is also written, if anywhere.
    var copy: FileDescriptorSink?

    /// The byte offset of the next line.
    var offset: Int {
        readOffset - (end - start)
    }

    /// The hash of every byte read so far, in hexadecimal.
    var fingerprint: String {
        hash.text
    }

    /// Opens `path` for reading; `-` is standard input.
    ///
    /// - Throws: ``ToolError`` when the file cannot be opened.
    init(path: String) throws(ToolError) {
        if path == "-" {
            descriptor = STDIN_FILENO
            closesDescriptor = false
            name = "standard input"
        } else {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw ToolError("Cannot open '\(path)': \(SystemError.describe(errno))")
            }
            closesDescriptor = true
            name = "'\(path)'"
        }
        buffer = [UInt8](repeating: 0, count: 64 << 10)
    }

    deinit {
        if closesDescriptor { close(descriptor) }
    }

    /// The file's device, inode, size and modification time, to tell whether it changed between two readings; `nil`
    /// for standard input or a file that is not regular.
    var identity: [Int]? {
        var status = stat()
        guard closesDescriptor, fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return [
            Int(status.st_dev), Int(status.st_ino), Int(status.st_size), Int(status.st_mtim.tv_sec),
            Int(status.st_mtim.tv_nsec),
        ]
    }

    /// Reads on from `offset` of a regular file; hashing starts again.
    ///
    /// - Throws: ``ToolError`` when the input cannot be repositioned (standard input).
    func seek(to offset: Int) throws(ToolError) {
        guard lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) else {
            throw ToolError("Cannot read \(name) again from byte \(offset): \(SystemError.describe(errno))")
        }
        start = 0
        end = 0
        isAtEnd = false
        readOffset = offset
        hash = Fingerprint()
    }

    /// The next line without its line break (`\n` or `\r\n`), or `nil` at the end of the input.
    ///
    /// - Throws: ``ToolError`` when reading fails or the line is longer than ``maximumLineLength``.
    func nextLine() throws -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            let (start, end) = (self.start, self.end)
            let newline = buffer.withUnsafeBytes { bytes -> Int? in
                guard start < end, let base = bytes.baseAddress,
                    let found = memchr(base + start, 0x0A, end - start)
                else { return nil }
                return base.distance(to: found)
            }
            if let newline {
                line.append(contentsOf: buffer[start..<newline])
                self.start = newline + 1
                if line.last == 0x0D { line.removeLast() }
                return line
            }
            line.append(contentsOf: buffer[start..<end])
            guard line.count <= Self.maximumLineLength else {
                throw ToolError(
                    "A line of \(name) at byte \(offset - line.count) is longer than "
                        + "\(Formatting.byteSize(Self.maximumLineLength)); it is not one kvtool wrote")
            }
            self.start = 0
            self.end = 0
            if isAtEnd { return line.isEmpty ? nil : line }
            try fill()
        }
    }

    private func fill() throws {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ToolError("Cannot read \(name): \(SystemError.describe(errno))")
            }
            end = count
            isAtEnd = count == 0
            readOffset += count
            buffer.withUnsafeBytes { bytes in
                let read = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                hash.add(read)
                copy?.write(read)
            }
            if let failure = copy?.failure { throw failure }
            return
        }
    }
}

/// A hash of a stream of bytes that is the same in every process, unlike `Hasher`: FNV-1a over 64 bits, taking the
/// stream eight bytes at a time (a little-endian word per step) and the bytes of a last, partial word one at a time.
/// How the stream is cut into calls of ``add(_:)`` does not change it.
struct Fingerprint {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325
    /// The bytes of a word not complete yet, and how many.
    private var pending: UInt64 = 0
    private var pendingCount = 0

    private static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// Adds bytes to the hash.
    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        var state = self.state
        var offset = 0
        while pendingCount > 0 && pendingCount < 8 && offset < bytes.count {
            pending |= UInt64(bytes[offset]) << (8 * UInt64(pendingCount))
            pendingCount += 1
            offset += 1
        }
        if pendingCount == 8 {
            state = (state ^ pending) &* Self.prime
            pending = 0
            pendingCount = 0
        }
        while bytes.count - offset >= 8 {
            state =
                (state ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                &* Self.prime
            offset += 8
        }
        while offset < bytes.count {
            pending |= UInt64(bytes[offset]) << (8 * UInt64(pendingCount))
            pendingCount += 1
            offset += 1
        }
        self.state = state
    }

    /// The hash in hexadecimal, 16 digits: the bytes of a last, partial word hashed one at a time.
    var text: String {
        var state = self.state
        for index in 0..<pendingCount {
            state = (state ^ ((pending >> (8 * UInt64(index))) & 0xFF)) &* Self.prime
        }
        return String(state, radix: 16).leftPadded(to: 16)
    }
}
