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

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        entities = try arguments[\.entities]
        output = try arguments[\.output]
        chunkSize = try arguments[\.chunkSize]
        outputOptions = try OutputOptions(arguments, \.file)
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
            sink.write(try ExportHeader(store: store).json().serialized() + "\n")
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
            if let file {
                try file.commit()
                var summary =
                    "Exported \(Formatting.count(end.records, "record")) of "
                    + "\(Formatting.count(selected.count, "entity", plural: "entities"))"
                if end.chunks > 0 {
                    summary += " and \(Formatting.count(end.chunks, "chunk")) of their external values"
                }
                console.print(summary + " to \(file.path).")
            }
            return 0
        }
    }
}
