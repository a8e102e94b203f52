import Foundation
import KVStore
import KVStoreInspection

/// What `--explain` prints of a query of `count` or `list`: the plan as the JSON output of `count` names it, the index
/// and what it reads of it (keys shown as values, a range as the conditions that bound it), whether the index alone
/// decides the count, and what is checked on each record read.
///
/// ```swift
/// let explanation = QueryExplanation(query)
/// console.output.write(explanation.text)
/// ```
struct QueryExplanation {
    /// The lines, each a label and its text, in print order.
    let lines: [(label: String, text: String)]

    /// Explains a planned query, and the aggregates it feeds.
    ///
    /// - Parameters:
    ///   - query: The planned query.
    ///   - aggregates: Each aggregate with the index that answers it without reading records, if any.
    init(_ query: RecordQuery, aggregates: [(title: String, index: IndexCatalog?)] = []) {
        let conditions = query.conditions.map(\.description)
        var lines: [(String, String)] = [("plan", query.planDescription)]
        let isExact: Bool
        switch query.plan {
        case .all:
            lines.append(("reads", "every record; a count is the record table's own count of its entries"))
            isExact = true
        case .record(let id):
            lines.append(("reads", "the record \(id.uuidString)"))
            isExact = false
        case .scan:
            lines.append(("reads", "every record, in ID order (no ready index answers the conditions)"))
            isExact = false
        case .index(let lookup, let exact):
            let index = lookup.index
            lines.append(
                (
                    "index",
                    "\(index.name) (\(index.fields.joined(separator: ", ")))"
                        + (index.isUnique ? ", unique" : "") + (index.isMultiEntry ? ", multi-entry" : "")
                ))
            lines.append(("reads", Self.reads(lookup, query: query)))
            isExact = exact
        }
        lines.append(
            (
                "exact",
                isExact
                    ? "yes: the index decides every condition, and a count reads no record"
                    : "no: every record read is checked against every condition"
            ))
        lines.append(("checks", isExact || conditions.isEmpty ? "none" : conditions.joined(separator: ", ")))
        for (title, index) in aggregates {
            lines.append(
                (
                    title,
                    index.map { "one entry of index \($0.name), no record read unless its key was cut" }
                        ?? "over the records read"
                ))
        }
        self.lines = lines
    }

    /// The lines as text, labels aligned.
    var text: String {
        let width = (lines.map(\.label.count).max() ?? 0) + 2
        return lines.map { label, text in
            (label + ":").padding(toLength: width, withPad: " ", startingAt: 0) + text + "\n"
        }.joined()
    }

    /// The lines as one JSON object, each label a member holding its text.
    var json: JSONValue {
        .object(lines.map { JSONMember($0.label, .string($0.text)) })
    }

    /// What a lookup reads: its keys as values, or its range as the conditions that bound it.
    private static func reads(_ lookup: IndexLookup, query: RecordQuery) -> String {
        let kinds = RecordJSON.kinds(of: query.entity.fields)
        switch lookup.reading {
        case .keys(let keys):
            let shown = keys.prefix(5).map { key in
                key.withUnsafeBytes { IndexEntries.describe($0, index: lookup.index, kinds: kinds) }
            }
            let more = keys.count > 5 ? ", and \(keys.count - 5) more" : ""
            return "\(keys.count) \(keys.count == 1 ? "key" : "keys"): " + shown.joined(separator: "; ") + more
        case .range:
            let fields = lookup.index.fields
            var bounds: [String] = []
            for field in fields.prefix(lookup.fixedFields) {
                if let equality = query.conditions.first(where: {
                    $0.field == field && $0.operator == .equal && !$0.isGuessed
                }) {
                    bounds.append(equality.description)
                }
            }
            if lookup.fixedFields < fields.count {
                let next = fields[lookup.fixedFields]
                for condition in query.conditions where condition.field == next {
                    if condition.operator == .prefix || (condition.operator.comparison != nil && !condition.isGuessed) {
                        bounds.append(condition.description)
                    }
                }
                if query.conditions.contains(where: {
                    $0.field == next && $0.operator.comparison != nil && !$0.isGuessed
                }) {
                    return "the range of keys where " + bounds.joined(separator: " and ") + ", null excluded"
                }
            }
            return "the range of keys where " + bounds.joined(separator: " and ")
        }
    }
}
