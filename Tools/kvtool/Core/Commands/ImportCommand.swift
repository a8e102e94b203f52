import Foundation
import KVStore
import LMDB

/// `kvtool import <path> <file> [--chunk-size n] [--stop-on-error | --keep-going]`: JSON Lines into a store.
struct ImportCommand: Command {
    static let spec = CommandSpec(
        name: "import", abstract: "Import JSON Lines (as 'export' writes them) into an existing store.",
        discussion: """
            Each line is checked against the catalog: the entity must exist, the ID be a UUID equal to the record's \
            id field, and each field's value agree with the kind the catalog records for it (plain JSON is read in \
            that kind's form; tagged values say their kind). Records are upserted by ID, a chunk of lines per write \
            transaction, with their index entries and unique constraints kept as the library keeps them; new field \
            names are added to the entity's catalog entry in the same transaction.
            With --stop-on-error (the default) the first bad line stops the import: nothing of its chunk is written, \
            and the chunks before it stay committed. With --keep-going bad lines are reported and skipped. The \
            exit status is 1 when any line was bad.
            The store's entities must exist: open the store once with the program first. Do not import into a store \
            that a program has open for writing, whose field names would go out of step with the catalog.
            FILE may be '-' for standard input.
            A store without a lock file gets one, which LMDB creates: run as another user than the store's owner \
            (root, say), kvtool refuses such a store rather than leave a lock.mdb the owner cannot open; run it as \
            the owner instead. A store that has its lock file may be imported into by any user who can write it.
            """,
        arguments: [
            CommonOptions.path, ArgumentSpec.one("file", help: "The JSON Lines file, or '-' for standard input."),
        ],
        options: [
            CommonOptions.chunkSize(default: 10_000, unit: "lines"),
            .flag("stop-on-error", help: "Stop at the first bad line, writing nothing of its chunk (the default)."),
            .flag("keep-going", help: "Skip bad lines, reporting each."),
        ])

    /// The store's directory.
    let path: String
    /// The input file, or `-`.
    let file: String
    /// Lines per write transaction.
    let chunkSize: Int
    /// Whether bad lines are skipped rather than stopping the import.
    let keepsGoing: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.argument("path")
        file = arguments.argument("file")
        chunkSize = try arguments.positiveCount("chunk-size", default: 10_000)
        if arguments.flag("stop-on-error") && arguments.flag("keep-going") {
            throw UsageError("--stop-on-error and --keep-going cannot be used together")
        }
        keepsGoing = arguments.flag("keep-going")
    }

    /// A bad line: its number and what is wrong.
    private struct BadLine: Error {
        let number: Int
        let message: String
    }

    /// What one committed chunk did.
    private struct ChunkResult {
        var written = 0
        var rejected: [BadLine] = []
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        let reader = try LineReader(path: file)
        return try withStore(path, writable: true) { store in
            let writer = try RecordWriter(store: store)
            var entities = Dictionary(uniqueKeysWithValues: store.entities.map { ($0.name, $0) })
            var headerKinds: [String: [String: ValueKind]] = [:]
            var kinds = ImportLine.kinds(of: entities, header: headerKinds)
            var lineNumber = 0
            var committed = 0
            var skipped = 0
            let progress = Progress(console: console)
            defer { progress.finish() }
            while true {
                var parsed: [(number: Int, line: ImportLine)] = []
                var bad: [BadLine] = []
                while parsed.count + bad.count < chunkSize, let bytes = try reader.nextLine() {
                    lineNumber += 1
                    if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                    do throws(ToolError) {
                        let line = try ImportLine.parse(bytes, entities: entities, kinds: kinds)
                        if case .header(let header) = line {
                            headerKinds = header
                            kinds = ImportLine.kinds(of: entities, header: headerKinds)
                        }
                        parsed.append((lineNumber, line))
                    } catch {
                        bad.append(BadLine(number: lineNumber, message: error.message))
                        if !keepsGoing { break }
                    }
                }
                if parsed.isEmpty && bad.isEmpty { break }
                if let first = bad.first, !keepsGoing {
                    return stop(at: first, committed: committed, console: console)
                }
                let result: ChunkResult
                do {
                    result = try store.environment.write { txn in try apply(parsed, writer: writer, txn: txn) }
                } catch let error as BadLine {
                    return stop(at: error, committed: committed, console: console)
                } catch let error as LMDBError where error.code > 0 {
                    // An errno: a full disk reads as one, though LMDB reports a short write as EIO.
                    throw ToolError(
                        "Cannot write the store at '\(path)': \(SystemError.describe(error.code, writing: path)); "
                            + "nothing of this chunk was written, and the \(Formatting.count(committed, "record")) "
                            + "before it stay committed")
                }
                committed += result.written
                for line in (bad + result.rejected).sorted(by: { $0.number < $1.number }) {
                    console.printError("Error: line \(line.number): \(line.message); skipped")
                    skipped += 1
                }
                entities = try store.environment.read { txn in try writer.entities(in: txn) }
                kinds = ImportLine.kinds(of: entities, header: headerKinds)
                progress.update(
                    "import: \(Formatting.count(lineNumber, "line")), \(Formatting.count(committed, "record"))")
            }
            progress.finish()
            var summary =
                "Imported \(Formatting.count(committed, "record")) from \(file == "-" ? "standard input" : file)"
            if skipped > 0 { summary += "; skipped \(Formatting.count(skipped, "bad line"))" }
            console.print(summary + ".")
            return skipped > 0 ? 1 : 0
        }
    }

    /// Writes a chunk's records in the transaction, and its changed catalog entries.
    ///
    /// - Throws: ``BadLine`` for the first rejected record when stopping on errors (the transaction is aborted);
    ///   what LMDB throws.
    private func apply(
        _ lines: [(number: Int, line: ImportLine)], writer: RecordWriter, txn: borrowing Transaction
    ) throws -> ChunkResult {
        var entities = try writer.entities(in: txn)
        let before = entities
        var result = ChunkResult()
        for (number, line) in lines {
            guard case .record(let name, let id, let value) = line, var entity = entities[name] else { continue }
            do {
                try writer.write(value, id: id, entity: &entity, txn: txn)
                entities[name] = entity
                result.written += 1
            } catch let error as RejectedRecord {
                let bad = BadLine(number: number, message: error.message)
                if !keepsGoing { throw bad }
                result.rejected.append(bad)
            }
        }
        for (name, entity) in entities where before[name]?.fields != entity.fields {
            try writer.saveCatalog(entity, txn: txn)
        }
        return result
    }

    /// Reports the line that stopped the import, and returns exit status 1.
    private func stop(at line: BadLine, committed: Int, console: Console) -> Int32 {
        console.printError("Error: line \(line.number): \(line.message)")
        console.printError(
            "Error: the import stopped at line \(line.number): \(Formatting.count(committed, "record")) "
                + "\(committed == 1 ? "was" : "were") committed before it; nothing of its chunk was written")
        return 1
    }
}
