import CommandLineKit
import KVStoreInspection
import LMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `kvtool copy <path> <dest> [--compact] [--force] [--mode <mode>]`: a consistent backup of a store, live or not.
struct CopyCommand: Command {
    static let configuration = CommandConfiguration(
        name: "copy", abstract: "Copy the store to a new directory as a consistent snapshot.",
        discussion: """
            The copy is taken in one read transaction, so programs may go on reading and writing the store \
            meanwhile, and it is what the store held when the copy began. DEST is created if missing and must not \
            hold a data.mdb yet (with --force, DEST/data.mdb is replaced; no program may have that copy open). \
            With --compact, free pages are left out and the rest renumbered: the copy is as small as the data, and \
            takes longer to make.
            The copy's data.mdb is written under a temporary name in DEST, flushed to disk and renamed into place \
            only once complete: a copy that fails (a full disk, say) leaves no data.mdb, and a DEST it created is \
            removed. Only a regular file of your own is ever replaced, never a symbolic link, a FIFO, a device or \
            another user's file. The data file's mode is 0600 (owner only) unless --mode gives another; a DEST \
            kvtool creates gets the same permissions, with search permission where reading is allowed.
            """)

    /// The arguments and options of `kvtool copy`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let destination = Argument<String>("dest", help: "The directory of the copy; it must hold no data.mdb.")
        let compacts = Flag("compact", help: "Leave free pages out, making the copy as small as the data.")
        let force = Flag("force", help: "Replace DEST/data.mdb if it exists; only a regular file of your own.")
        let mode = OutputOptions.mode
    }

    /// The store's directory.
    let path: String
    /// The copy's directory.
    let destination: String
    /// Whether to compact.
    let compacts: Bool
    /// `--force` and `--mode` for the copy's data file.
    let outputOptions: OutputOptions

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        destination = try arguments[\.destination]
        compacts = arguments[\.compacts]
        outputOptions = OutputOptions(replacesExisting: arguments[\.force], mode: try arguments[\.mode].permissions)
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let createdDirectory = try prepareDestination()
            var copied = false
            defer { if !copied && createdDirectory { rmdir(destination) } }
            let file = try OutputFile(path: destination + "/data.mdb", options: outputOptions)
            defer { file.discard() }
            let aftermath =
                createdDirectory
                ? "'\(destination)' was not created"
                : file.replacesFile ? "'\(file.path)' was left as it was" : "no data.mdb was left in '\(destination)'"
            do {
                try store.environment.copy(toDescriptor: file.descriptor, compacting: compacts)
                try file.commit()
            } catch let error as LMDBError where error.code > 0 {
                throw OutputFailure(
                    action: "Cannot copy the store to '\(destination)'",
                    reason: SystemError.describe(error.code, writing: file.path), aftermath: aftermath)
            } catch let failure as OutputFailure {
                throw OutputFailure(
                    action: "Cannot copy the store to '\(destination)'", reason: failure.reason, aftermath: aftermath)
            }
            copied = true
            var status = stat()
            let size = stat(file.path, &status) == 0 ? Int(status.st_size) : 0
            console.print(
                "Copied \(store.path) to \(destination)\(compacts ? ", compacted" : ""): "
                    + "\(Formatting.byteSize(size)) (\(Formatting.grouped(size)) bytes).")
            return 0
        }
    }

    /// Makes sure the destination is a directory other than the store's, creating it when missing, and returns
    /// whether it created it.
    ///
    /// - Throws: ``ToolError`` when the destination is not a directory, is the store's own, or cannot be created.
    private func prepareDestination() throws(ToolError) -> Bool {
        var status = stat()
        guard stat(destination, &status) == 0 else {
            guard errno == ENOENT else {
                throw ToolError("Cannot copy the store to '\(destination)': \(SystemError.describe(errno))")
            }
            // Search permission goes with each read permission the data file gets, so the copy can be opened.
            let mode = outputOptions.mode
            let directoryMode: mode_t = 0o700 | (mode & 0o040 != 0 ? 0o050 : 0) | (mode & 0o004 != 0 ? 0o005 : 0)
            guard mkdir(destination, directoryMode) == 0 else {
                throw ToolError(
                    "Cannot create the directory '\(destination)': \(SystemError.describe(errno, writing: destination))"
                )
            }
            return true
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw ToolError(
                "Cannot copy the store to '\(destination)': it is \(FileKind(mode: status.st_mode).description), "
                    + "not a directory")
        }
        var source = stat()
        if stat(path, &source) == 0 && source.st_dev == status.st_dev && source.st_ino == status.st_ino {
            throw ToolError("Cannot copy the store to '\(destination)': it is the store's own directory")
        }
        return false
    }
}
