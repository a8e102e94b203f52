import Foundation
import KVStore
import KVStoreInspection

/// Prints history entries for `kvtool history`: a block of lines each for people, or a JSON line each.
///
/// Text, an entry's token, time and author, then a line per change (its kind, entity and ID, the model whose delete
/// caused a cascaded or nullified change, and a deleted model's kept values):
///
/// ```
/// 5F0C1E2A-…:3  2026-05-09T06:13:20.123456Z  importer
///   deleted    Project 01900000-…-000000000101  kept {"name":"Inbox"}
///   cascaded   Task 01900000-…-000000000201  from Project 01900000-…-000000000101  kept {"title":"Plan"}
/// ```
///
/// JSON, one object per entry: `{"token":…,"date":…,"author":…,"changes":[{"kind":"cascaded","entity":"Task",
/// "id":…,"cause":{"entity":"Project","id":…},"kept":{"title":"Plan"}}]}`. Kept values are written as `export`
/// writes records, with the kinds the store's catalog gives their entity.
struct HistoryPrinter {
    /// The catalog's kinds of each entity's top-level fields, for the kept values.
    let kinds: [String: [String: ValueKind]]

    /// A printer for the entities of `store`'s catalog.
    init(entities: [EntityCatalog]) {
        kinds = Dictionary(
            entities.map { ($0.name, RecordJSON.kinds(of: $0.fields)) }, uniquingKeysWith: { first, _ in first })
    }

    /// The text of one entry, with its final line break.
    func text(_ entry: HistoryEntry) -> String {
        var text =
            "\(entry.token)  \(Self.time(entry.date))  \(entry.author.map(Self.quotedIfNeeded) ?? "(no author)")\n"
        let tombstones = Self.tombstones(of: entry)
        for change in entry.changes {
            let name = Self.kindName(change.kind)
            text += "  " + name + String(repeating: " ", count: max(1, 11 - name.count))
            text += "\(change.entity) \(RecordKey.text(change.id))"
            switch change.kind {
            case .nullified(let cause): text += "  by \(cause.entity) \(RecordKey.text(cause.id))"
            case .cascaded(let cause): text += "  from \(cause.entity) \(RecordKey.text(cause.id))"
            default: break
            }
            if let tombstone = tombstones[change.model], !tombstone.keptValues.isEmpty {
                text += "  kept " + kept(tombstone).serialized()
            }
            text += "\n"
        }
        return text
    }

    /// The JSON of one entry.
    func json(_ entry: HistoryEntry) -> JSONValue {
        let tombstones = Self.tombstones(of: entry)
        let changes = entry.changes.map { change -> JSONValue in
            var members = [
                JSONMember("kind", .string(Self.kindName(change.kind))),
                JSONMember("entity", .string(change.entity)),
                JSONMember("id", .string(RecordKey.text(change.id))),
            ]
            switch change.kind {
            case .nullified(let cause), .cascaded(let cause):
                members.append(
                    JSONMember(
                        "cause",
                        .object([
                            JSONMember("entity", .string(cause.entity)),
                            JSONMember("id", .string(RecordKey.text(cause.id))),
                        ])))
            default: break
            }
            if let tombstone = tombstones[change.model] { members.append(JSONMember("kept", kept(tombstone))) }
            return .object(members)
        }
        return .object([
            JSONMember("token", .string(entry.token.description)),
            JSONMember("date", .string(Self.time(entry.date))),
            JSONMember("author", entry.author.map(JSONValue.string) ?? .null),
            JSONMember("changes", .array(changes)),
        ])
    }

    /// A tombstone's kept values as an object, fields in name order, each as `export` writes its entity's records.
    private func kept(_ tombstone: HistoryTombstone) -> JSONValue {
        let values = tombstone.keptValues.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        return RecordJSON.json(forRecord: .object(values), kinds: kinds[tombstone.entity] ?? [:])
    }

    /// The tombstones of an entry by model.
    private static func tombstones(of entry: HistoryEntry) -> [ChangeSet.ModelID: HistoryTombstone] {
        Dictionary(
            entry.tombstones.map { (ChangeSet.ModelID(entity: $0.entity, id: $0.id), $0) },
            uniquingKeysWith: { first, _ in first })
    }

    /// A commit's time in ISO 8601, in UTC, to the microsecond the history records it with:
    /// `2026-05-09T06:13:20.123456Z`.
    static func time(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard micros.magnitude < 1e17 else { return ISO8601.displayString(date) }
        let whole = Int64(micros)
        let seconds = whole >= 0 ? whole / 1_000_000 : (whole - 999_999) / 1_000_000
        let fraction = String(whole - seconds * 1_000_000)
        let text = ISO8601.displayString(Date(timeIntervalSince1970: Double(seconds)))
        guard text.hasSuffix("Z") else { return text }
        return text.dropLast() + "." + String(repeating: "0", count: 6 - fraction.count) + fraction + "Z"
    }

    /// `inserted`, `updated`, `nullified`, `deleted` or `cascaded`.
    static func kindName(_ kind: ChangeSet.Change.Kind) -> String {
        switch kind {
        case .inserted: "inserted"
        case .updated: "updated"
        case .nullified: "nullified"
        case .deleted: "deleted"
        case .cascaded: "cascaded"
        }
    }

    /// An author as printed, the last thing on its line: as is, or as a JSON string when it is empty or holds
    /// control characters (a line break would make it read as more lines).
    private static func quotedIfNeeded(_ author: String) -> String {
        let plain = !author.isEmpty && !author.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        return plain ? author : JSONValue.string(author).serialized()
    }
}
