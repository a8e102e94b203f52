import CommandLineKit
import KVStoreInspection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file that kvtool writes (`export --output`, `extract`, the data file of `copy`), written as a careful system
/// tool writes one: nothing partial is ever left at its path, and nothing is written through what was there.
///
/// The file is created new under a temporary name in the target's directory (`O_CREAT | O_EXCL | O_NOFOLLOW`, with
/// the output mode set exactly, whatever the umask), written through ``sink`` or ``descriptor``, and on ``commit()``
/// flushed to disk and renamed into place. Until then the path is untouched; a command that fails calls
/// ``discard()`` (or lets the file go), which removes the temporary file.
///
/// What may be replaced: nothing, unless ``OutputOptions/replacesExisting`` (`--force`) is set, and even then only a
/// regular file of the user's; never a symbolic link, a FIFO, a device, a directory or another user's file. The path
/// is checked when the file is created and again at the commit, and the commit itself cannot follow a symbolic link
/// (a rename replaces a link, not its target) nor, without `--force`, replace anything (a hard link, which fails when
/// the path exists).
///
/// ```swift
/// let file = try OutputFile(path: "tasks.jsonl", options: OutputOptions(replacesExisting: true))
/// defer { file.discard() }
/// file.sink.write(text)
/// try file.commit()
/// ```
final class OutputFile {
    /// The path the file is renamed to on success.
    let path: String
    /// The descriptor of the temporary file, open for writing; closed by ``commit()`` or ``discard()``.
    let descriptor: Int32
    /// A buffered sink over ``descriptor``, whose failures name the file.
    let sink: FileDescriptorSink
    private let temporaryPath: String
    /// Whether a file was at the path when this one was created, which the commit replaces.
    let replacesFile: Bool
    private let options: OutputOptions
    private var isFinished = false

    /// Checks `path` and creates the temporary file beside it.
    ///
    /// - Parameters:
    ///   - path: Where the file goes.
    ///   - options: Whether an existing file may be replaced, and the new file's mode.
    /// - Throws: ``ToolError`` when something at `path` may not be replaced, or the temporary file cannot be created.
    init(path: String, options: OutputOptions) throws(ToolError) {
        self.path = path
        self.options = options
        replacesFile = try Self.checkTarget(path, options: options)
        let (directory, name) = Self.split(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw ToolError("Cannot write '\(path)': it names a directory, not a file")
        }
        var attempt = 0
        while true {
            let candidate = directory + "/." + name + ".kvtool-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
            let opened = open(
                candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, options.mode)
            if opened >= 0 {
                temporaryPath = candidate
                descriptor = opened
                break
            }
            let code = errno
            attempt += 1
            // EEXIST: another temporary file took the name; draw another.
            guard code == EEXIST, attempt < 16 else {
                throw ToolError(
                    "Cannot write '\(path)': cannot create a file in '\(directory)': "
                        + SystemError.describe(code, writing: directory))
            }
        }
        let aftermath = replacesFile ? "'\(path)' was left as it was" : "'\(path)' was not created"
        sink = FileDescriptorSink(descriptor: descriptor, name: "'\(path)'", aftermath: aftermath)
        // The mode is the one asked for, exactly: the umask narrows what open(2) gives.
        if fchmod(descriptor, options.mode) != 0 {
            let code = errno
            discard()
            throw ToolError("Cannot set the mode of a file in '\(directory)': \(SystemError.describe(code))")
        }
    }

    deinit {
        discard()
    }

    /// The failure of a write to this file, with the message the file's own writes give.
    func failure(_ code: Int32) -> OutputFailure {
        OutputFailure(
            action: "Cannot write '\(path)'", reason: SystemError.describe(code, writing: path),
            aftermath: replacesFile ? "'\(path)' was left as it was" : "'\(path)' was not created")
    }

    /// Throws the failure of a write so far, removing the temporary file, so that long work stops early.
    ///
    /// - Throws: ``OutputFailure``.
    func check() throws(OutputFailure) {
        guard let code = sink.errorCode else { return }
        discard()
        throw failure(code)
    }

    /// Flushes what was written to disk and renames the file into place.
    ///
    /// - Throws: ``OutputFailure`` when a write, the flush to disk or the rename fails, and ``ToolError`` when the
    ///   path now holds something that may not be replaced; the temporary file is removed then, and the path is as it
    ///   was.
    func commit() throws {
        sink.flush()
        try check()
        // A file system that allocates late (NFS, ext4 with delayed allocation) reports a full disk here.
        let syncError = fsync(descriptor) == 0 ? 0 : errno
        let closeError = close(descriptor) == 0 ? 0 : errno
        isFinished = true
        if syncError != 0 || closeError != 0 {
            unlink(temporaryPath)
            throw failure(syncError != 0 ? syncError : closeError)
        }
        do {
            try place()
        } catch {
            unlink(temporaryPath)
            throw error
        }
        Self.syncDirectory(Self.split(path).directory)
    }

    /// Removes the temporary file, unless the file was committed; calling it again does nothing.
    func discard() {
        guard !isFinished else { return }
        isFinished = true
        close(descriptor)
        unlink(temporaryPath)
    }

    /// Renames the flushed temporary file to the path: over a regular file of the user's with `--force`, only to a
    /// free path otherwise.
    private func place() throws {
        _ = try Self.checkTarget(path, options: options)
        if options.replacesExisting {
            guard rename(temporaryPath, path) == 0 else { throw failure(errno) }
            return
        }
        // link(2) fails when the path exists, whatever is there: unlike a check then a rename, nothing that appeared
        // meanwhile is replaced.
        if link(temporaryPath, path) == 0 {
            unlink(temporaryPath)
            return
        }
        let code = errno
        if code == EEXIST {
            throw ToolError("Cannot write '\(path)': it appeared while kvtool wrote it; use --force to replace it")
        }
        guard code == EPERM || code == ENOTSUP else { throw failure(code) }
        // A file system without hard links (vfat, some FUSE and network ones) gets a rename, checked just before.
        _ = try Self.checkTarget(path, options: options)
        guard rename(temporaryPath, path) == 0 else { throw failure(errno) }
    }

    /// Checks what is at `path`, and returns whether a file is there to be replaced.
    ///
    /// - Throws: ``ToolError`` for something that is not a regular file, a file without `--force`, another user's file.
    static func checkTarget(_ path: String, options: OutputOptions) throws(ToolError) -> Bool {
        let status: stat
        switch FileKind.status(of: path) {
        case .success(let found): status = found
        case .failure(let failure) where failure.code == ENOENT: return false
        case .failure(let failure):
            throw ToolError("Cannot write '\(path)': \(SystemError.describe(failure.code))")
        }
        let kind = FileKind(mode: status.st_mode)
        guard kind == .regular else {
            throw ToolError(
                "Cannot write '\(path)': it is \(kind.description), not a regular file; kvtool never replaces one, "
                    + "even with --force")
        }
        guard options.replacesExisting else {
            throw ToolError("Cannot write '\(path)': it already exists; use --force to replace it")
        }
        guard status.st_uid == geteuid() else {
            throw ToolError(
                "Cannot write '\(path)': it belongs to another user (uid \(status.st_uid)), not to you "
                    + "(uid \(geteuid())); kvtool replaces only your own files")
        }
        return true
    }

    /// The directory and the last component of `path`: `.` for a bare name.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        return (directory, String(path[path.index(after: slash)...]))
    }

    /// Flushes the directory's entry list to disk, so that a rename survives a power loss.
    ///
    /// A failure is not reported: the file's own data is on disk already, and some file systems refuse to flush a
    /// directory (`EINVAL`).
    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}

/// `--force` and `--mode`, which every command that writes a file takes.
struct OutputOptions {
    /// Whether an existing regular file of the user's may be replaced.
    var replacesExisting = false
    /// The permissions of the new file.
    var mode: mode_t = 0o600

    /// `--force` and `--mode`, as a group of declarations a command's arguments include.
    struct Arguments: ParsableArguments {
        let force = OutputOptions.force
        let mode = OutputOptions.mode
    }

    /// `--force`.
    static let force = Flag(
        "force", help: "Replace the file if it exists; only a regular file of your own, never a link, FIFO or device.")
    /// `--mode <mode>`.
    static let mode = Option<FileMode>(
        "mode", valueName: "mode", help: "The permissions of the new file, in octal.", default: FileMode(0o600),
        defaultDescription: "0600, owner only")

    /// The help paragraph of every command that writes a file.
    static let discussion = """
        The file is written under a temporary name beside it, flushed to disk and renamed into place only once \
        complete, so a failure (a full disk, say) never leaves part of it. An existing file is replaced only with \
        --force, and only a regular file of your own: never a symbolic link, a FIFO, a device, a directory or \
        another user's file. The new file's mode is 0600 (owner only) unless --mode gives another.
        """

    /// The options as given.
    init(replacesExisting: Bool = false, mode: mode_t = 0o600) {
        self.replacesExisting = replacesExisting
        self.mode = mode
    }

    /// Reads `--force` and `--mode` from the group `group` of a command's arguments.
    ///
    /// - Throws: ``UsageError`` for a mode that is not three octal digits (four with a leading 0); the parser has
    ///   reported that already.
    init<Declarations>(
        _ arguments: ParsedArguments<Declarations>, _ group: KeyPath<Declarations, Arguments>
    ) throws(UsageError) {
        replacesExisting = arguments[group.appending(path: \.force)]
        mode = try arguments[group.appending(path: \.mode)].permissions
    }
}

/// The permissions of a new file, as `--mode` takes them: three octal digits, four with a leading 0.
struct FileMode: ArgumentValue {
    /// The permission bits.
    let permissions: mode_t

    /// The permissions `permissions`.
    init(_ permissions: mode_t) {
        self.permissions = permissions
    }

    /// `644` or `0644`, from 000 to 777.
    static var parser: ValueParser<FileMode> {
        ValueParser(
            expecting: "octal permissions from 000 to 777, such as 0644",
            describe: { "0" + String($0.permissions, radix: 8) }
        ) { text in
            let digits = text.count == 4 && text.hasPrefix("0") ? String(text.dropFirst()) : text
            guard digits.count == 3, digits.allSatisfy({ ("0"..."7").contains($0) }),
                let mode = mode_t(digits, radix: 8)
            else { return nil }
            return FileMode(mode)
        }
    }
}
