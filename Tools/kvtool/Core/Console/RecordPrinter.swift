import Foundation
import KVStore
import KVStoreInspection

/// Prints records for `list`: one JSON line each as they come, or the rows of an aligned table at the end.
///
/// A JSON line is the record in the form `export` writes records (natural JSON for the catalog's kinds), or with
/// `--fields` an object of those fields (`null` when absent). A table's columns are the given fields, or every
/// top-level field in the order the records show them.
final class RecordPrinter {
    private let kinds: [String: ValueKind]
    private let fields: [String]?
    private let asJSON: Bool
    private let console: Console
    private var rows: [(id: UUID, record: RecordValue)] = []

    /// Creates a printer.
    ///
    /// - Parameters:
    ///   - kinds: The catalog's kinds of the top-level fields.
    ///   - fields: The fields to print, or `nil` for all.
    ///   - asJSON: Whether to print JSON Lines rather than a table.
    ///   - console: Where to print.
    init(kinds: [String: ValueKind], fields: [String]?, asJSON: Bool, console: Console) {
        self.kinds = kinds
        self.fields = fields
        self.asJSON = asJSON
        self.console = console
    }

    /// Prints a record, or keeps it for the table.
    func add(_ id: UUID, _ record: RecordValue) {
        guard asJSON else {
            rows.append((id, record))
            return
        }
        guard let fields else {
            console.print(RecordJSON.json(forRecord: record, kinds: kinds).serialized())
            return
        }
        let members = fields.map { field in
            JSONMember(field, RecordJSON.json(for: value(field, id: id, in: record) ?? .null, kind: kinds[field]))
        }
        console.print(JSONValue.object(members).serialized())
    }

    /// Prints the table, when printing one.
    func finish() {
        guard !asJSON else { return }
        let columns = fields ?? Self.columns(of: rows.map(\.record))
        var table = TextTable(headers: columns)
        for row in rows {
            table.append(columns.map { field in value(field, id: row.id, in: row.record).map(Self.cell) ?? "" })
        }
        console.output.write(table.rendered())
        console.print("(\(Formatting.count(rows.count, "record")))")
    }

    /// A field's value, `nil` when absent; `id` is the record's key when the record has no `id` field.
    private func value(_ field: String, id: UUID, in record: RecordValue) -> RecordValue? {
        if case .object(let entries) = record, entries.contains(where: { $0.name == field }) {
            return RecordIndexKeys.value(of: field, in: record)
        }
        if field == "id" { return .uuid(id) }
        let value = RecordIndexKeys.value(of: field, in: record)
        return value == .null ? nil : value
    }

    /// Every top-level field, `id` first, in the order the records show them.
    private static func columns(of records: [RecordValue]) -> [String] {
        var columns = ["id"]
        var seen: Set<String> = ["id"]
        for case .object(let entries) in records {
            for entry in entries where seen.insert(entry.name).inserted { columns.append(entry.name) }
        }
        return columns
    }

    /// A value as a table cell: text as is, dates in ISO 8601, containers as JSON.
    static func cell(_ value: RecordValue) -> String {
        switch value {
        case .string(let text), .url(let text), .decimal(let text): text
        case .date(let date): ISO8601.displayString(date)
        case .uuid(let uuid): uuid.uuidString
        default: RecordJSON.json(for: value, kind: value.kind).serialized()
        }
    }
}
