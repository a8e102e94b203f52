import KVStore
import KVStoreInspection

/// kvtool's import parsing, reachable from the fuzz targets in `Tools/fuzz` and nowhere else.
///
/// It runs what `kvtool import` runs on each line before writing: the JSON parser, the line's checks against the
/// store's catalog, the record's index keys, and the record's encoding, decoded back. It is not API: import it only
/// with `@_spi(Fuzzing) import KVToolCore`.
///
/// ```swift
/// let importer = try ImportFuzzing(storePath: "/tmp/fuzz-store")
/// let record = try importer.parse(Array(line.utf8))
/// ```
@_spi(Fuzzing) public struct ImportFuzzing: Sendable {
    /// The store's entities by name, as import reads them.
    private let entities: [String: EntityCatalog]

    /// Reads the catalog of the store at `storePath`, then closes the store.
    ///
    /// - Throws: An error naming the path when it holds no KVStore store.
    public init(storePath: String) throws {
        let store = try InspectedStore.open(storePath)
        defer { store.close() }
        entities = Dictionary(uniqueKeysWithValues: store.entities.map { ($0.name, $0) })
    }

    /// Parses `line` as `kvtool import` does, reading a record with the store's field kinds.
    ///
    /// - Returns: For a record, its encoding decoded back and encoded again, as import would store it, then its
    ///   index keys; nil for a header.
    /// - Throws: What import reports for a bad line; ``RecordError`` when the record's own encoding does not decode.
    public func parse(_ line: [UInt8]) throws -> [[UInt8]]? {
        guard case .record(let recordLine) = try ImportLine.parse(line), let catalog = entities[recordLine.entity]
        else { return nil }
        let entity = ImportEntity(catalog: catalog, isNew: false, exported: nil, exportedKinds: nil, ordinal: 0)
        let value = try entity.record(from: recordLine)
        var fields = catalog.fields
        let bytes = value.encode(fields: &fields)
        var keys: [[UInt8]]
        do {
            let decoded = try bytes.withBorrowedBytes { try RecordValue.decode(from: $0, fields: fields) }
            keys = [decoded.encode(fields: &fields)]
        } catch {
            throw RecordError(description: "\(catalog.name) record \(bytes) does not decode: \(error)")
        }
        for index in catalog.indexes {
            // A value that cannot be part of a key is a rejected record for import, reported when it checks the
            // input: only the keys of the others matter here.
            if let indexKeys = try? RecordIndexKeys.keys(of: value, in: index) { keys += indexKeys }
        }
        return keys
    }

    /// A record that import accepted but whose encoding does not decode: a bug, where a bad line is not.
    public struct RecordError: Error, CustomStringConvertible {
        /// The entity, the encoding and the decoding error.
        public let description: String
    }

    /// Whether `line` parses as JSON and its value, written back as JSON text, parses as the same value.
    ///
    /// - Returns: nil when the line is not JSON.
    public static func jsonRoundTrips(_ line: [UInt8]) -> Bool? {
        guard let value = try? JSONParser.parse(line) else { return nil }
        return (try? JSONParser.parse(Array(value.serialized().utf8))) == value
            && (try? JSONParser.parse(Array(value.serialized(pretty: true).utf8))) == value
    }
}
