import CommandLineKit
import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// `kvtool extract <path> <entity> <id> <attribute> <file>`: one external value, streamed to a file.
struct ExtractCommand: Command {
    static let configuration = CommandConfiguration(
        name: "extract", abstract: "Write a record's external value to a file, chunk by chunk.",
        discussion: """
            The attribute must be one the entity keeps in external storage ('kvtool schema' lists them; 'get' shows \
            each value's size). The chunks are read in one read transaction and written as they are read, so the \
            value may be larger than memory. If a chunk is missing or of the wrong size, the command fails and \
            leaves no file.
            \(OutputOptions.discussion)
            """)

    /// The arguments and options of `kvtool extract`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let entity = CommonOptions.entity
        let id = Argument<String>("id", help: "The ID of the record (a UUID).")
        let attribute = Argument<String>("attribute", help: "The external attribute, as the catalog names it.")
        let file = Argument<String>("file", help: "The file to write; it must not exist, unless --force is given.")
        let output = OutputOptions.Arguments()
    }

    /// The store's directory.
    let path: String
    /// The entity of the record.
    let entity: String
    /// The record's ID.
    let id: UUID
    /// The external attribute.
    let attribute: String
    /// The file to write.
    let file: String
    /// `--force` and `--mode` for the file.
    let outputOptions: OutputOptions

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        entity = try arguments[\.entity]
        let text = try arguments[\.id]
        guard let id = RecordKey.uuid(parsing: text) else { throw UsageError("Malformed UUID '\(text)'") }
        self.id = id
        attribute = try arguments[\.attribute]
        file = try arguments[\.file]
        outputOptions = try OutputOptions(arguments, \.output)
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let entity = try store.entity(named: entity)
            guard let field = entity.external.first(where: { $0.name == attribute }) else {
                let known =
                    entity.external.isEmpty ? "it has none" : entity.external.map(\.name).joined(separator: ", ")
                throw ToolError("\(entity.name).\(attribute) is not an external attribute (\(known))")
            }
            let records = try store.recordTable(of: entity)
            let chunks = try store.environment.openTable(named: Catalog.externalTableName(entity.name))
            let output = try OutputFile(path: file, options: outputOptions)
            defer { output.discard() }
            let size = try store.environment.read { txn in
                try write(
                    field, of: entity, records: records, chunks: chunks, to: output, environment: store.environment,
                    txn: txn)
            }
            try output.commit()
            console.print("Wrote \(Formatting.count(size, "byte")) of \(entity.name).\(attribute) of \(id) to \(file)")
            return 0
        }
    }

    /// Writes the value's chunks to `output`, checking each one and each write, and returns the value's size.
    private func write(
        _ field: ExternalFieldCatalog, of entity: EntityCatalog, records: Table, chunks: Table, to output: OutputFile,
        environment: Environment, txn: borrowing Transaction
    ) throws -> Int {
        guard let record = try RecordKey.record(id, of: entity, in: records, txn: txn) else {
            throw ToolError("\(entity.name) has no record with ID \(id)")
        }
        guard let descriptor = ExternalDescriptor(RecordIndexKeys.value(of: attribute, in: record))
        else {
            throw ToolError("\(entity.name) \(id) holds no value for \(attribute); run 'kvtool check \(path)'")
        }
        let prefix = IntegrityChecker.chunkPrefix(owner: id, field: field.fieldID, value: descriptor.valueID)
        for index in 0..<descriptor.chunkCount {
            var key = prefix
            withUnsafeBytes(of: UInt32(index).bigEndian) { key.append(contentsOf: $0) }
            try txn.withUnsafeBytes(forKey: key, in: chunks) { bytes in
                guard let bytes, bytes.count == descriptor.size(ofChunk: index) else {
                    throw ToolError(
                        "Chunk \(index) of \(descriptor.chunkCount) of \(entity.name).\(attribute) of \(id) is "
                            + (bytes == nil ? "missing" : "of the wrong size") + "; run 'kvtool check \(path)'")
                }
                output.sink.write(bytes)
                try output.check()
            }
            // The pages read through the memory map would otherwise keep the whole value resident.
            if index % 64 == 63 { try environment.releaseMappedPages() }
        }
        return descriptor.byteCount
    }
}
