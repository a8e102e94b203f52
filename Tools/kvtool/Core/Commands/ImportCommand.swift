import CommandLineKit
import Foundation
import KVStore
import KVStoreInspection
import LMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `kvtool import <path> <file>`: an export (or hand-written JSON Lines) into a store, checked whole before anything
/// is written, then written a chunk per transaction, resumable after a failure.
struct ImportCommand: Command {
    static let configuration = CommandConfiguration(
        name: "import", abstract: "Import JSON Lines (as 'export' writes them), checked first.",
        discussion: """
            The whole input is checked before anything is written: an input with any problem changes nothing, and \
            each problem is reported with its line (exit status 65). Each line must be well-formed JSON without a \
            member named twice, of a kind this kvtool reads (header, record, chunk, delete, end). A record must \
            belong to an entity of the store or of the export's catalog, hold its ID as its id field and only \
            fields those catalogs name, each top-level one of the kind the catalog records for it, and be \
            followed by a chunk line for each chunk its external values' descriptors name, of the right size. No \
            ID may appear twice, no unique value twice or held by another stored record; references through \
            relationships that do not allow dangling IDs must name records of the input or of the store; required \
            fields must be there; an export must end with its end line, whose counts must match.
            Required fields: the catalog does not record whether the program's model makes a field optional, so \
            the records are the evidence. A field is required when every record of the entity that the export holds \
            has a value for it (its end line lists them) and every record the store holds has one; with neither an \
            export nor stored records, only id is.
            Then the input is read again and written, a chunk of records per write transaction, each index kept by \
            the library's derivation and new field names interned in the catalog in the same transaction. A value \
            larger than --chunk-bytes is staged over several transactions, as the library stages streamed values. \
            Each transaction reads the catalog's generation, and stops the import when another writer changed the \
            schema of what it writes (an index added meanwhile is maintained), so an import runs beside a live \
            program. It also writes the catalog entry 'import' with the line to go on from; the last one deletes \
            it. After a failure (a full disk, a killed process) the store is consistent, and 'kvtool import \
            --resume' with the same input checks the rest of it again, deletes the staged chunks of the value that \
            was under way, and finishes the import; --abandon forgets it instead.
            An incremental export ('kvtool export --since'; its header has "since") carries its source's changes \
            after a history token to a copy of the source: its records replace the stored ones (--on-conflict \
            replace is its default, and the only policy it takes), and each delete line deletes its record, with \
            its index entries and external values, if the store holds it, and does nothing otherwise. Delete lines \
            come before the records, so that the unique values they free are free for the records. No delete rule \
            is applied: the source's cascades and nullifications are in the export as changes of their own. A \
            reference to a deleted record, from the input or from a stored record the input neither replaces nor \
            deletes, is a problem: the copy then differs from its source. So are two stored records that traded \
            unique values since the token (each value is held by the other when its record is checked). Make a new \
            copy from a full export then. Apply incremental exports in order, each from the token the previous one \
            went through (its header's "through"). A store whose history is on records the import's changes, \
            deletes included, as its own entries.
            An empty store (no entities, or no store at the path, which is then created) gets the export's whole \
            catalog and schema version; a store with entities gets those of the export's entities that it lacks \
            and the input has records of, and keeps its own catalog for the others.
            A record whose ID is stored is a problem, unless --on-conflict says otherwise: replace writes it in \
            place of the stored one (deleting the external values it replaces), skip keeps the stored one. A unique \
            value that another stored record holds is a problem under replace too, since replacing that record \
            would mean deleting it, whose delete rules kvtool does not apply; skip skips the record.
            Exit status: 0 when everything was imported (with --dry-run, when it would be), 65 for an invalid \
            input, 1 for a failure (the message says whether to resume), 64 for a usage mistake. Standard input is \
            copied to the scratch directory, to be read twice.
            A store without a lock file gets one, which LMDB creates: run as another user than the store's owner \
            (root, say), kvtool refuses such a store rather than leave a lock.mdb the owner cannot open; run it as \
            the owner instead. A store that has its lock file may be imported into by any user who can write it.
            """)

    /// The arguments and options of `kvtool import`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let file = Argument<String?>(
            "file", help: "The JSON Lines file, or '-' for standard input (none with --abandon).")
        let policy = Option<ConflictPolicy?>(
            "on-conflict", valueName: "policy", help: "What a record whose ID or unique value is stored does.",
            defaultDescription: "fail")
        let resumes = Flag("resume", help: "Finish the import that stopped, from the same input.")
        let abandons = Flag("abandon", help: "Forget the import that stopped; what it wrote stays.")
        let isDryRun = Flag("dry-run", help: "Check the input and report, writing nothing.")
        let chunkSize = CommonOptions.chunkSize(default: 10_000, unit: "records")
        let chunkBytes = Option<Int>(
            "chunk-bytes", valueName: "n", help: "The most bytes of external values per transaction.",
            default: 16 << 20, defaultDescription: "16 MiB", parser: .integer(in: 1...))
        let scratchDirectory = Option<String?>(
            "scratch-directory", valueName: "dir", help: "Where the import keeps what it remembers of the input.",
            defaultDescription: "$TMPDIR, or /tmp")
    }

    /// The exit status of an input with problems (`EX_DATAERR` in sysexits.h).
    static let invalidInputStatus: Int32 = 65

    /// The store's directory.
    let path: String
    /// The input file, or `-`.
    let file: String
    /// Records per write transaction, and bytes of external values.
    let chunkSize: Int
    let chunkBytes: Int
    /// The conflict policy given, if any.
    let policy: ConflictPolicy?
    /// `--resume`, `--abandon`, `--dry-run`.
    let resumes: Bool
    let abandons: Bool
    let isDryRun: Bool
    /// Where the scratch store goes.
    let scratchDirectory: String

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        file = try arguments[\.file] ?? ""
        chunkSize = try arguments[\.chunkSize]
        chunkBytes = try arguments[\.chunkBytes]
        policy = try arguments[\.policy]
        resumes = arguments[\.resumes]
        abandons = arguments[\.abandons]
        isDryRun = arguments[\.isDryRun]
        if resumes && abandons { throw UsageError("--resume and --abandon cannot be used together") }
        if file.isEmpty && !abandons { throw UsageError("Missing expected argument '<file>'") }
        if !file.isEmpty && abandons { throw UsageError("--abandon takes no <file>: it imports nothing") }
        if abandons && (isDryRun || policy != nil) {
            throw UsageError("--abandon takes no --dry-run or --on-conflict: it imports nothing")
        }
        var directory = try arguments[\.scratchDirectory] ?? NSTemporaryDirectory()
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        scratchDirectory = directory
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        guard case .success = FileKind.status(of: path + "/data.mdb") else {
            if resumes || abandons { throw ToolError("No store at '\(path)': there is no import to resume or abandon") }
            return try importIntoNewStore(console)
        }
        return try withStore(path, writable: !isDryRun) { store in
            abandons ? try abandon(store, console) : try importInto(store, console)
        }
    }

    // MARK: - The input

    /// The input, copied to a spool file when it is standard input.
    private func openInput() throws -> (LineReader, SpoolFile?) {
        let reader = try LineReader(path: file)
        guard file == "-" else { return (reader, nil) }
        let spool = try SpoolFile(in: scratchDirectory)
        reader.copy = spool.sink
        return (reader, spool)
    }

    /// Checks the input against the store (or the export's catalog alone, for a store to create).
    private func validate(
        _ reader: LineReader, store: InspectedStore?, resumeLine: Int, policy: ConflictPolicy?, console: Console
    ) throws -> ImportValidation {
        let progress = Progress(console: console)
        defer { progress.finish() }
        let validator = ImportValidator(
            store: store, policy: policy, resumeLine: resumeLine, chunkSize: chunkSize, scratchParent: scratchDirectory)
        return try validator.run(reader, progress: progress)
    }

    /// Reports an invalid input and returns its exit status.
    private func report(_ problems: ImportProblems, console: Console) -> Int32 {
        for problem in problems.first {
            console.printError("Error: line \(Formatting.grouped(problem.line)): \(problem.message)")
        }
        let shown = problems.count > problems.limit ? " (the first \(problems.limit) shown)" : ""
        console.printError(
            "Error: the input is invalid: \(Formatting.count(problems.count, "problem"))\(shown); nothing was "
                + "written to the store")
        return Self.invalidInputStatus
    }

    /// What a valid input would do, for `--dry-run`.
    private func reportDryRun(_ validation: ImportValidation, console: Console) -> Int32 {
        let counts = validation.dispositions
        let written = (counts[.written] ?? 0) + (counts[.replaces] ?? 0)
        var text = "The input is valid: it would import \(Formatting.count(written, "record"))"
        if let replaced = counts[.replaces], replaced > 0 {
            text += " (\(Formatting.grouped(replaced)) replacing stored ones)"
        }
        let skipped = (counts[.keepsStored] ?? 0) + (counts[.skipped] ?? 0)
        if skipped > 0 { text += " and skip \(Formatting.grouped(skipped))" }
        if !validation.deleteCounts.isEmpty {
            text += " and delete \(Formatting.count(counts[.deletes] ?? 0, "record"))"
            if let absent = counts[.absent], absent > 0 { text += " (\(Formatting.grouped(absent)) more not stored)" }
        }
        console.print(text + "; nothing was written.")
        return 0
    }

    // MARK: - Importing

    private func importIntoNewStore(_ console: Console) throws -> Int32 {
        try checkNewStorePath()
        let (reader, spool) = try openInput()
        let identity = reader.identity
        let validation = try validate(reader, store: nil, resumeLine: 1, policy: policy, console: console)
        try spool?.finish()
        guard validation.problems.count == 0 else { return report(validation.problems, console: console) }
        if isDryRun { return reportDryRun(validation, console: console) }
        try createStore()
        console.print("Created the store at '\(path)'.")
        return try withStore(path, writable: true) { store in
            try write(
                validation, into: store, from: spool?.path ?? file, identity: identity, resuming: nil,
                console: console)
        }
    }

    private func importInto(_ store: InspectedStore, _ console: Console) throws -> Int32 {
        if let damaged = store.damagedEntries.first {
            throw ToolError(
                "The catalog entry '\(damaged.key)' of '\(path)' does not decode; kvtool does not import into a store "
                    + "whose schema it cannot read. Run 'kvtool check \(path)'")
        }
        let interrupted = try store.environment.read { txn in
            try ImportProgress.read(in: txn, catalog: store.catalog)
        }
        if let interrupted, try interrupted.isRunning(in: path) {
            throw ToolError(
                "Another kvtool import is writing '\(path)' (of \(interrupted.input == "-" ? "standard input" : "'\(interrupted.input)'"), "
                    + "at line \(Formatting.grouped(interrupted.nextLine))); wait for it to end")
        }
        var policy = self.policy
        if resumes {
            guard let interrupted else {
                throw ToolError("'\(path)' has no interrupted import to resume (its catalog has no import entry)")
            }
            guard let stored = ConflictPolicy(rawValue: interrupted.onConflict) else {
                throw ToolError("The interrupted import's --on-conflict '\(interrupted.onConflict)' is unknown")
            }
            if let given = self.policy, given != stored {
                throw UsageError(
                    "The interrupted import ran with --on-conflict \(stored.rawValue); resume it with the same policy")
            }
            policy = stored
        } else if let interrupted {
            throw ToolError(
                "In '\(path)', \(interrupted.description). Finish it with 'kvtool import --resume \(path) <file>' and "
                    + "the same input, or forget it with 'kvtool import --abandon \(path)' (what it wrote stays)")
        }
        let (reader, spool) = try openInput()
        let identity = reader.identity
        let validation = try validate(
            reader, store: store, resumeLine: resumes ? interrupted?.nextLine ?? 1 : 1, policy: policy,
            console: console)
        try spool?.finish()
        if resumes, let interrupted,
            interrupted.fingerprint != validation.fingerprint || interrupted.inputBytes != validation.bytes
        {
            throw ToolError(
                "The input is not the one of the interrupted import: \(interrupted.description), over "
                    + "\(Formatting.count(interrupted.inputBytes, "byte")) of input; this one has "
                    + "\(Formatting.count(validation.bytes, "byte")), or other bytes. Resume with the same input")
        }
        guard validation.problems.count == 0 else { return report(validation.problems, console: console) }
        if isDryRun { return reportDryRun(validation, console: console) }
        return try write(
            validation, into: store, from: spool?.path ?? file, identity: identity,
            resuming: resumes ? interrupted : nil, console: console)
    }

    /// The write pass, and its report.
    private func write(
        _ validation: ImportValidation, into store: InspectedStore, from input: String, identity: [Int]?,
        resuming interrupted: ImportProgress?, console: Console
    ) throws -> Int32 {
        let policy = validation.policy
        let reader = try LineReader(path: input)
        // Standard input was copied while it was checked: the copy is what gets written.
        guard file == "-" || reader.identity == identity else {
            throw ToolError("'\(file)' changed while kvtool checked it; nothing was written. Run the import again")
        }
        try reader.seek(to: interrupted?.nextOffset ?? 0)
        let lock = try ExternalWriteLock(directory: store.path)
        let now = Date()
        var entry =
            interrupted
            ?? ImportProgress(
                input: file, inputBytes: validation.bytes, fingerprint: validation.fingerprint,
                onConflict: policy.rawValue, nextLine: 1, nextOffset: 0, written: 0, replaced: 0, skipped: 0,
                values: 0, valueBytes: 0, createdEntities: [], started: now, updated: now, lockToken: lock.token,
                scratchDirectory: nil)
        entry.lockToken = lock.token
        if let leftover = interrupted?.scratchDirectory { ImportScratch.removeLeftover(leftover) }
        entry.scratchDirectory = validation.scratch.directory
        let writer = ImportWriter(
            store: store, validation: validation, policy: policy, chunkSize: chunkSize, chunkBytes: chunkBytes,
            lock: lock, entry: entry, resumedToken: interrupted?.lockToken)
        if interrupted != nil { try deleteAbandonedValues(store) }
        let progress = Progress(console: console)
        defer { progress.finish() }
        do {
            try writer.prepareTables()
            try writer.run(reader, progress: progress)
        } catch let stop as ImportStop {
            progress.finish()
            console.printError("Error: line \(Formatting.grouped(stop.line)): \(stop.message)")
            console.printError("Error: " + stopped(at: stop.line, writer: writer) + ". Resume once it is settled")
            return 1
        } catch let error as LMDBError where error.code > 0 {
            progress.finish()
            // An errno: a full disk reads as one, though LMDB reports a short write as EIO.
            throw ToolError(
                "Cannot write the store at '\(path)': \(SystemError.describe(error.code, writing: path)); "
                    + stopped(at: nil, writer: writer))
        }
        progress.finish()
        let totals = writer.totals
        if !writer.createdEntities.isEmpty {
            console.print(
                "Created \(writer.createdEntities.joined(separator: ", ")) from the export's catalog.")
        }
        var summary = "Imported \(Formatting.count(totals.written, "record"))"
        if totals.replaced > 0 { summary += " (\(Formatting.grouped(totals.replaced)) replacing stored ones)" }
        if totals.values > 0 {
            summary +=
                " and \(Formatting.count(totals.values, "external value")) (\(Formatting.byteSize(totals.valueBytes)))"
        }
        summary += " from \(file == "-" ? "standard input" : file)"
        if totals.deleted > 0 || totals.notStored > 0 {
            summary += "; deleted \(Formatting.count(totals.deleted, "record"))"
            if totals.notStored > 0 { summary += " (\(Formatting.grouped(totals.notStored)) more not stored)" }
        }
        if totals.skipped > 0 { summary += "; skipped \(Formatting.grouped(totals.skipped)) (--on-conflict skip)" }
        console.print(summary + ".")
        return 0
    }

    /// The end of a failure's message: what was committed, and how to finish.
    private func stopped(at line: Int?, writer: ImportWriter) -> String {
        let committed = Formatting.count(writer.totals.written, "record")
        guard writer.hasCommitted else {
            return "nothing was written"
                + (line.map { " (the import stopped at line \(Formatting.grouped($0)))" } ?? "")
                + "; run the import again"
        }
        return "the import stopped with \(committed) committed and the store consistent; 'kvtool import --resume "
            + "\(path) \(file)' finishes it"
    }

    /// Deletes the staged chunks that the interrupted import (or a dead program) left, whose writer is gone.
    private func deleteAbandonedValues(_ store: InspectedStore) throws {
        let probe = try StoreLockProbe(directory: store.path)
        let values = try store.entities.filter { !$0.external.isEmpty }.map { entity in
            try CatalogExternalValues.open(
                entity: entity.name, environment: store.environment, isChecked: store.format.formatVersion >= 2)
        }
        guard !values.isEmpty else { return }
        try store.environment.write { txn in
            for table in values { try table.deleteAbandonedValues(probe: probe, in: txn) }
        }
    }

    /// `--abandon`: forgets an interrupted import.
    private func abandon(_ store: InspectedStore, _ console: Console) throws -> Int32 {
        let interrupted = try store.environment.read { txn in
            try ImportProgress.read(in: txn, catalog: store.catalog)
        }
        guard let interrupted else { throw ToolError("'\(path)' has no interrupted import to abandon") }
        if try interrupted.isRunning(in: path) {
            throw ToolError(
                "The import of '\(interrupted.input)' into '\(path)' is still running; it cannot be abandoned")
        }
        try deleteAbandonedValues(store)
        try store.environment.write { txn in try ImportProgress.delete(in: txn, catalog: store.catalog) }
        if let leftover = interrupted.scratchDirectory { ImportScratch.removeLeftover(leftover) }
        console.print(
            "Forgot \(interrupted.description); the \(Formatting.count(interrupted.written, "record")) it wrote stay.")
        return 0
    }

    // MARK: - A new store

    /// Checks that a store may be created at `path`: nothing is there, or an empty directory. A directory that holds
    /// other files is refused, so that a mistyped path never plants a store among someone's files.
    ///
    /// - Throws: ``ToolError`` for a file, or a directory with files in it.
    private func checkNewStorePath() throws(ToolError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw ToolError("Cannot create a store at '\(path)': \(SystemError.describe(errno))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw ToolError("'\(path)' is a file, not a store: a store is a directory that holds data.mdb")
        }
        let contents: [String]
        do {
            contents = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw ToolError("Cannot read the directory '\(path)': \(error.localizedDescription)")
        }
        guard contents.isEmpty else {
            throw ToolError(
                "'\(path)' holds no store but other files (\(contents.sorted().prefix(3).joined(separator: ", "))"
                    + "\(contents.count > 3 ? ", ..." : "")); import creates a store only in a new or empty directory")
        }
    }

    /// Creates a store at `path` (its directory too, mode 0700, when missing): the catalog with its format entry, as
    /// a container creates one.
    private func createStore() throws {
        var status = stat()
        if stat(path, &status) != 0 {
            guard errno == ENOENT else {
                throw ToolError("Cannot create a store at '\(path)': \(SystemError.describe(errno))")
            }
            do {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ToolError("Cannot create the directory '\(path)': \(error.localizedDescription)")
            }
        } else if status.st_mode & S_IFMT != S_IFDIR {
            throw ToolError("'\(path)' is a file, not a store: a store is a directory that holds data.mdb")
        }
        let environment = try Environment.open(path: path, configuration: Environment.Configuration(maxTables: 8))
        defer { try? environment.close() }
        let catalog = try environment.openTable(named: Catalog.tableName, create: true)
        try environment.write { txn in
            guard try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: catalog) == nil else {
                throw ToolError("A store appeared at '\(path)' during the import; run the import again")
            }
            try Catalog.write(
                StoreFormat.newStore(created: Date()), key: Catalog.formatKey, in: txn,
                table: catalog)
        }
    }
}

/// `--on-conflict fail|replace|skip`.
extension ConflictPolicy: ArgumentValue {}
