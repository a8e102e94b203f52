import CommandLineKit
import Foundation
import KVStore
import KVStoreInspection

/// `kvtool export <path> [<entity> ...] [--output <file>]`: records as JSON Lines, streamed in chunks.
struct ExportCommand: Command {
    static let configuration = CommandConfiguration(
        name: "export", abstract: "Export records as JSON Lines, losslessly.",
        discussion: """
            The export is JSON Lines, one object per line, each with a "kind". The first line is the header: \
            {"kvtool-export":2, "kind":"header", "format":1, "created":"...", "schema":{...}, "entities":[...]}, \
            with \
            the store's catalog (every entity's entry, as the catalog holds it, and the schema version), from which \
            'import' creates the schema in an empty store. Then each record, entities in name order and records in \
            ID order: {"kind":"record", "entity":"Task", "id":"...", "record":{...}}. The last line counts what the \
            export holds, and names the fields every exported record has: \
            {"kind":"end", "records":6, "chunks":0, "entities":{"Task":{"records":4, "chunks":0, "required":[...]}}} \
            (written without the spaces, as every line is).
            A field whose value has the kind the catalog gives is plain JSON: numbers, strings, Booleans, dates as \
            ISO 8601 in UTC exact to the bit, UUIDs as strings, data as Base64. A field whose value has another kind \
            is tagged, as an object with one member named after its kind: {"$string":"..."}, {"$int":3}, \
            {"$bool":true}. Values inside arrays and objects are plain JSON where that reads back unchanged (null, \
            Booleans, strings, integers, numbers with '.' or an exponent, arrays, objects) and tagged otherwise: \
            {"$uuid":"..."}, {"$uint":7}, {"$float":0.5}, {"$date":"..."}, {"$data":"..."}, {"$decimal":"..."}, \
            {"$url":"..."}, {"$stringMap":{...}}, {"$intMap":{"1":...}}, {"$object":{...}} and {"$double":"nan"}.
            External values travel inline: a record whose external field holds a value (its descriptor \
            {"id":{"$uuid":"..."},"size":...,"chunkSize":...}) is followed by a line per chunk of it, in the order of \
            the record's fields, chunk by chunk: {"kind":"chunk", "entity":"Photo", "id":"...", "field":"image", \
            "index":0, "data":"<Base64>"}. One chunk is in memory at a time, so values may be larger than memory.
            Records are read a chunk per short read transaction, with the chunks of their external values in the \
            same transaction, so a live store is not held back and each record is written as one consistent state; \
            records written meanwhile may or may not be included. A record whose external values exceed 8 MiB is \
            read in a transaction of its own, open while its chunks are written out.
            A record table is damaged when it holds a key that is not a record key (a 16-byte ID), which is \
            skipped, or when the entries read differ from the table's own count of them (compared when no program \
            committed during the walk). The export then writes every record it can read but not the end line, so \
            'import' refuses it (with --output, no file is left), reports the damage and exits with 1. A record \
            that does not decode stops the export.
            History: when the store's change history is on, the header records the store's last history token, \
            read before the first record: "through":"<store ID>:<position>". A copy made from the export holds the \
            store's changes through it (records committed during the export may be in it too, and come again), and \
            goes on with --since.
            --since <token> writes an incremental export (format version 3): the changes committed after the token, \
            all read in one read transaction, held open while the lines are written, with the history's last token, \
            which the header records as "through" beside "since". Each model a commit changed since (delete rules' \
            cascades and nullifications included) is written once, as it is now: a record line with its chunk lines \
            when it exists, and when it was deleted a delete line, {"kind":"delete", "entity":"Task", "id":"..."}. \
            Delete lines come first, then the models that existed at the token, then those inserted since. The end \
            line also counts the deletes ("deletes":2, in total and per entity) and lists the entities that have \
            lines. With entities named, only their changes are written, but the token still covers the whole \
            store. 'kvtool import' applies it to a copy: records replace the stored ones, delete lines delete \
            theirs. Without --output, the token the export goes through is also printed to standard error, to pass \
            to the next --since. A store without history, a token of another store, a token after which entries \
            were pruned, one past the last commit and a damaged history entry are errors (exit status 1): export in \
            full into a new copy instead.
            \(OutputOptions.discussion)
            """)

    /// The arguments and options of `kvtool export`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let entities = Argument<[String]>(
            "entity", help: "The entities whose records to export; all of them by default.")
        let output = Option<String?>(
            "output", valueName: "file", help: "Write to this new file instead of standard output.")
        let file = OutputOptions.Arguments()
        let chunkSize = CommonOptions.chunkSize(default: CommonOptions.readChunkSize, unit: "records")
        let since = HistoryCommand.sinceOption(
            help: "Export only the changes committed after this history token (as an export's header, 'kvtool "
                + "history' or 'kvtool info' gives it), with delete lines for the models deleted since.")
    }

    /// The store's directory.
    let path: String
    /// The entities to export; empty for all.
    let entities: [String]
    /// The output file, or `nil` for standard output.
    let output: String?
    /// The records per read transaction.
    let chunkSize: Int
    /// `--force` and `--mode` for the output file.
    let outputOptions: OutputOptions
    /// The token an incremental export starts after, or `nil` for the whole store.
    let since: HistoryToken?

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        entities = try arguments[\.entities]
        output = try arguments[\.output]
        chunkSize = try arguments[\.chunkSize]
        outputOptions = try OutputOptions(arguments, \.file)
        since = try HistoryCommand.token(try arguments[\.since])
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            var selected: [EntityCatalog] = []
            for name in entities where !selected.contains(where: { $0.name == name }) {
                selected.append(try store.entity(named: name))
            }
            if entities.isEmpty {
                if let damaged = store.damagedEntries.first {
                    throw ToolError("The catalog entry '\(damaged.key)' does not decode; run 'kvtool check \(path)'")
                }
                selected = store.entities
            }
            // The file is checked and created before the first record is read, so that a path that may not be
            // written fails at once; it takes the export's name only once the whole export is written.
            let file = try output.map { path throws(ToolError) in try OutputFile(path: path, options: outputOptions) }
            defer { file?.discard() }
            let sink: any TextSink = file?.sink ?? console.output
            let checkOutput = { () throws in
                try file?.check()
                try console.checkOutput()
            }
            let history = try StoreHistory(store: store)
            if let since {
                let exporter = IncrementalExporter(
                    store: store, history: history, since: since, selected: Set(entities))
                let progress = Progress(console: console)
                let outcome = try exporter.export(to: sink, progress: progress, checkOutput: checkOutput)
                progress.finish()
                try report(
                    outcome.end, of: outcome.header, entityCount: outcome.end.entities.count, file: file,
                    console: console)
                return 0
            }
            let header = ExportHeader(store: store, through: try lastToken(history, console: console))
            sink.write(try header.json().serialized() + "\n")
            try checkOutput()
            let progress = Progress(console: console)
            var end = ExportEnd()
            var damage: [InspectionError] = []
            for entity in selected {
                let exporter = EntityExporter(store: store, entity: entity, chunkSize: chunkSize)
                let outcome = try exporter.export(to: sink, progress: progress, checkOutput: checkOutput)
                end.entities.append(outcome.summary)
                damage += outcome.damage
            }
            guard damage.isEmpty else {
                // Every record that could be read is written, but not the end line: without it, import refuses the
                // export as incomplete. A file is not kept (the deferred discard removes it).
                progress.finish()
                for problem in damage { console.printError("Error: \(problem.message)") }
                console.printError(
                    "Error: The export is incomplete: "
                        + (file.map { "'\($0.path)' was not written" }
                            ?? "it has no end line, so 'kvtool import' refuses it"))
                return 1
            }
            sink.write(end.json.serialized() + "\n")
            progress.finish()
            try report(end, of: header, entityCount: selected.count, file: file, console: console)
            return 0
        }
    }

    /// The store's last history token, read before the first record, or `nil` when its history is off. A history
    /// that cannot be read does not stop a full export: the header goes without the token, with a warning.
    private func lastToken(_ history: StoreHistory, console: Console) throws -> HistoryToken? {
        do {
            return try history.store.environment.read { txn in try history.state(in: txn)?.lastToken }
        } catch let error as ToolError {
            console.printError(
                "warning: \(error.message). The export's header records no history token: a copy made from it "
                    + "cannot go on with 'kvtool export --since'")
            return nil
        }
    }

    /// Commits the output file and prints the summary, or without a file, prints the history token the export goes
    /// through to standard error.
    private func report(
        _ end: ExportEnd, of header: ExportHeader, entityCount: Int, file: OutputFile?, console: Console
    ) throws {
        guard let file else {
            if let through = header.through {
                console.printError(
                    "The export goes through history token \(through): go on from it with 'kvtool export \(path) "
                        + "--since \(through)'.")
            }
            return
        }
        try file.commit()
        var summary = "Exported \(Formatting.count(end.records, "record"))"
        if header.isIncremental {
            summary += " and \(Formatting.count(end.deletes, "delete"))"
        }
        summary += " of \(Formatting.count(entityCount, "entity", plural: "entities"))"
        if end.chunks > 0 {
            summary += " and \(Formatting.count(end.chunks, "chunk")) of their external values"
        }
        if let since = header.since, let through = header.through {
            summary += ", the changes after history token \(since) through \(through),"
        } else if let through = header.through {
            summary += ", through history token \(through),"
        }
        console.print(summary + " to \(file.path).")
    }
}
