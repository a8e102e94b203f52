import Foundation
import KVStore

/// `kvtool export <path> [<entity> ...] [--output <file>]`: records as JSON Lines, streamed in chunks.
struct ExportCommand: Command {
    static let spec = CommandSpec(
        name: "export", abstract: "Export records as JSON Lines, losslessly.",
        discussion: """
            The first line is a header with the kinds the catalog records for each entity's top-level fields: \
            {"kvtool-export":1,"format":1,"fields":{"Task":{"id":"uuid",...}}}. Each record follows \
            on its own line, entities in name order and records in ID order: \
            {"entity":"Task","id":"...","record":{...}}.
            A field whose value has the kind the header gives is plain JSON: numbers, strings, Booleans, dates as \
            ISO 8601 in UTC exact to the bit, UUIDs as strings, data as Base64. A field whose value has another kind \
            is tagged, as an object with one member named after its kind: {"$string":"..."}, {"$int":3}, \
            {"$bool":true}. Values inside arrays and objects, and fields the header gives no kind, are plain JSON \
            where that reads back unchanged (null, Booleans, strings, integers, numbers with '.' or an exponent, \
            arrays, objects) and tagged otherwise: {"$uuid":"..."}, \
            {"$uint":7}, {"$float":0.5}, {"$date":"..."}, {"$data":"..."}, {"$decimal":"..."}, {"$url":"..."}, \
            {"$stringMap":{...}}, {"$intMap":{"1":...}}, {"$object":{...}} and {"$double":"nan"}. 'import' reads \
            this back into the same records.
            Reading takes one short read transaction per chunk of records, so memory stays bounded and a live store \
            is not held back; records written meanwhile may or may not be included.
            \(OutputOptions.discussion)
            """,
        arguments: [
            CommonOptions.path,
            ArgumentSpec(name: "entity", help: "The entities to export; all of them by default.", arity: .zeroOrMore),
        ],
        options: [
            .value("output", "file", help: "Write to this new file instead of standard output."),
            OutputOptions.force, OutputOptions.mode,
            CommonOptions.chunkSize(default: CommonOptions.readChunkSize, unit: "records"),
        ])

    /// The member of the header line that marks an export, with its version.
    static let headerMarker = "kvtool-export"

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
    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.argument("path")
        entities = arguments.arguments("entity")
        output = arguments.value("output")
        chunkSize = try arguments.positiveCount("chunk-size", default: CommonOptions.readChunkSize)
        outputOptions = try OutputOptions(arguments)
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
            sink.write(Self.header(for: selected).serialized() + "\n")
            let progress = Progress(console: console)
            var total = 0
            for entity in selected {
                total += try export(entity, from: store, to: sink, progress: progress, checkOutput: checkOutput)
            }
            progress.finish()
            if let file {
                try file.commit()
                console.print(
                    "Exported \(Formatting.count(total, "record")) of "
                        + "\(Formatting.count(selected.count, "entity", plural: "entities")) to \(file.path).")
            }
            return 0
        }
    }

    /// The header line: the export's version, the store's format, and each entity's field kinds.
    static func header(for entities: [EntityCatalog]) -> JSONValue {
        let fields = entities.map { entity in
            let kinds = RecordJSON.kinds(of: entity.fields)
            let members = entity.fields.names.compactMap { name in
                kinds[name].map { JSONMember(name, .string($0.typeName)) }
            }
            return JSONMember(entity.name, .object(members))
        }
        return .object([
            JSONMember(headerMarker, .number("1")), JSONMember("format", .number(String(Catalog.formatVersion))),
            JSONMember("fields", .object(fields)),
        ])
    }

    /// Writes one entity's records, a chunk per read transaction, and returns how many.
    private func export(
        _ entity: EntityCatalog, from store: InspectedStore, to sink: any TextSink, progress: Progress,
        checkOutput: () throws -> Void
    ) throws -> Int {
        let kinds = RecordJSON.kinds(of: entity.fields)
        let entityJSON = JSONValue.string(entity.name).serialized()
        var scan = ChunkedScan(
            environment: store.environment, table: try store.recordTable(of: entity), chunkSize: chunkSize)
        var count = 0
        // The chunk's lines are written once its read transaction has ended, so that a slow reader of the output
        // (a pipe, a full disk) never keeps a transaction open.
        var lines = ""
        // A write that failed (a full disk, a closed pipe) stops the export at the end of its chunk.
        let flush = { (visited: Int) throws in
            sink.write(lines)
            lines = ""
            try checkOutput()
            progress.update("export: \(entity.name) \(Formatting.count(visited, "record"))")
        }
        try scan.forEach(afterChunk: flush) { _, key, value in
            guard let id = RecordKey.uuid(key) else {
                throw ToolError("\(entity.name) has a record key of \(key.count) bytes, not a UUID; run 'kvtool check'")
            }
            let record = try RecordKey.decode(value, id: id, entity: entity)
            lines += "{\"entity\":" + entityJSON + ",\"id\":\"" + RecordKey.text(id) + "\",\"record\":"
            RecordJSON.json(forRecord: record, kinds: kinds).write(to: &lines, pretty: false, depth: 0)
            lines += "}\n"
            count += 1
            return true
        }
        return count
    }
}
