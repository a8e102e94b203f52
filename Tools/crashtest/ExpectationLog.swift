import Foundation

/// One line of the expectation log: JSON, one object per line.
///
/// The writer appends an ``Kind/intent`` line with the transaction's whole delta before it starts the transaction,
/// and a ``Kind/commit`` line once the call that commits it returned (``Kind/failed`` for one that threw as it
/// should). Each line is fsynced before the writer goes on. So after a kill the log names every acknowledged
/// transaction, and at most one transaction — the last intent without its commit — may or may not be in the store,
/// and its delta is known exactly. The parent closes such an intent with ``Kind/present`` or ``Kind/absent`` once it
/// has seen the store.
struct LogLine: Codable {
    /// What a line says.
    enum Kind: String, Codable {
        /// The writer is about to run the transaction `sequence`, which changes `delta`.
        case intent
        /// The call that runs transaction `sequence` returned: it is committed.
        case commit
        /// The call threw, as the intent said it must: nothing of it was written.
        case failed
        /// Written by the parent: the in-flight transaction was found wholly in the store.
        case present
        /// Written by the parent: the in-flight transaction was found wholly absent from the store.
        case absent
    }

    /// What the line says.
    var kind: Kind
    /// The transaction's number, counting from 1 over the store's life.
    var sequence: Int
    /// What the transaction does, for reports.
    var operation: String?
    /// Whether the transaction must throw and write nothing (a unique violation).
    var mustFail: Bool?
    /// The transaction's changes, on an intent.
    var delta: Delta?
}

/// The expectation log file: appended by the writer, read and closed out by the parent.
final class ExpectationLog {
    private let descriptor: Int32
    private let encoder = JSONEncoder()

    /// Opens (creating) the log at `path` for appending.
    init(appendingTo path: String) throws {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CrashTestError("Cannot open the log '\(path)': \(errnoText())") }
    }

    deinit {
        close(descriptor)
    }

    /// Appends `line` in one `write` and waits for it to reach the disk.
    func append(_ line: LogLine) throws {
        var bytes = Array(try encoder.encode(line))
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw CrashTestError("Cannot write the log: \(errnoText())")
            }
            offset += written
        }
        guard fsync(descriptor) == 0 else { throw CrashTestError("Cannot fsync the log: \(errnoText())") }
    }

    /// The complete lines of the log from byte `offset` on, and the offset just past the last complete line.
    ///
    /// A last line without its newline was torn by the kill: it is left out, and ``truncate(path:to:)`` removes it.
    static func lines(at path: String, from offset: Int) throws -> (lines: [LogLine], end: Int) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return ([], offset) }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let data = try handle.readToEnd() ?? Data()
        guard let lastNewline = data.lastIndex(of: UInt8(ascii: "\n")) else { return ([], offset) }
        let complete = data[data.startIndex...lastNewline]
        let decoder = JSONDecoder()
        var lines: [LogLine] = []
        for text in complete.split(separator: UInt8(ascii: "\n")) {
            do {
                lines.append(try decoder.decode(LogLine.self, from: Data(text)))
            } catch {
                throw CrashTestError("A log line does not decode: \(String(decoding: text, as: UTF8.self))")
            }
        }
        return (lines, offset + complete.count)
    }

    /// Cuts the log at `path` to `length` bytes, dropping a torn last line.
    static func truncate(path: String, to length: Int) throws {
        guard Foundation.truncate(path, off_t(length)) == 0 || errno == ENOENT else {
            throw CrashTestError("Cannot truncate the log '\(path)': \(errnoText())")
        }
    }
}

/// A failure of the crash test itself (not a problem found in the store).
struct CrashTestError: Error, CustomStringConvertible {
    /// What went wrong.
    var description: String

    /// An error saying `description`.
    init(_ description: String) {
        self.description = description
    }
}

/// The text of the current `errno`.
func errnoText() -> String {
    String(cString: strerror(errno))
}
