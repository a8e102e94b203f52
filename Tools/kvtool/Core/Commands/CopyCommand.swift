#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `kvtool copy <path> <dest> [--compact]`: a consistent backup of a store, live or not.
struct CopyCommand: Command {
    static let spec = CommandSpec(
        name: "copy", abstract: "Copy the store to a new directory as a consistent snapshot.",
        discussion: """
            The copy is taken in one read transaction, so programs may go on reading and writing the store \
            meanwhile, and it is what the store held when the copy began. DEST is created if missing and must not \
            hold a data.mdb yet. With --compact, free pages are left out and the rest renumbered: the copy is as \
            small as the data, and takes longer to make.
            """,
        arguments: [
            CommonOptions.path, ArgumentSpec.one("dest", help: "The directory of the copy; it must hold no data.mdb."),
        ],
        options: [.flag("compact", help: "Leave free pages out, making the copy as small as the data.")])

    /// The store's directory.
    let path: String
    /// The copy's directory.
    let destination: String
    /// Whether to compact.
    let compacts: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.argument("path")
        destination = arguments.argument("dest")
        compacts = arguments.flag("compact")
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            if access(destination + "/data.mdb", F_OK) == 0 {
                throw ToolError("'\(destination)' already holds a data.mdb; copy to a new directory")
            }
            do {
                try store.environment.copy(to: destination, compacting: compacts)
            } catch {
                throw ToolError("Cannot copy the store to '\(destination)': \(error)")
            }
            var status = stat()
            let size = stat(destination + "/data.mdb", &status) == 0 ? Int(status.st_size) : 0
            console.print(
                "Copied \(store.path) to \(destination)\(compacts ? ", compacted" : ""): "
                    + "\(Formatting.byteSize(size)) (\(Formatting.grouped(size)) bytes).")
            return 0
        }
    }
}
