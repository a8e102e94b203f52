import Foundation
import KVStore
import LMDB

/// A store's change history as the crash tests check it after a kill: the counter, the positions of the table's
/// rows, and every entry it keeps, read through the public API, with what is wrong in how they fit together.
///
/// The entries are read with `history()` and the last position with `lastHistoryToken()`, as a program reads them;
/// the counter and the rows come from the history table itself (``HistoryTable``, package API), which the public API
/// does not show: a row left behind at or before the pruned-through position, or a gap, would not show otherwise.
struct HistorySnapshot {
    /// The last position given.
    var last: UInt64
    /// The last position pruned.
    var prunedThrough: UInt64
    /// The entries kept, in position order.
    var entries: [HistoryEntry]
    /// What does not fit: rows out of place, an entry that does not decode, a counter that disagrees.
    var problems: [String] = []

    /// The entry at `position`, when it is kept.
    func entry(at position: UInt64) -> HistoryEntry? {
        guard position > prunedThrough, position <= last else { return nil }
        let index = Int(position - prunedThrough - 1)
        guard index < entries.count, entries[index].token.position == position else {
            return entries.first { $0.token.position == position }
        }
        return entries[index]
    }

    /// Reads the history of the store at `path`, open in `container`; `nil` when the store records none.
    ///
    /// - Throws: What reading the store throws but for a damaged entry, which is a problem of the snapshot.
    static func read(from container: ModelContainer, path: String) throws -> HistorySnapshot? {
        let token: HistoryToken
        do {
            token = try container.lastHistoryToken()
        } catch KVStoreError.historyNotEnabled {
            return nil
        }
        var snapshot = HistorySnapshot(last: token.position, prunedThrough: 0, entries: [])
        // The registry hands out the container's environment, open as long as the container is.
        let environment = try Environment.open(path: path)
        let table = try environment.openTable(named: Catalog.historyTableName)
        let rows = try environment.read { txn in
            let counter = try HistoryTable(table: table).counter(in: txn)
            var rows = Rows(counter: counter)
            try txn.scan(table) { key, _ in
                guard key.count == 8 else {
                    rows.badKeys += 1
                    return true
                }
                let position = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
                if position == 0 { rows.hasCounter = true } else { rows.positions.append(position) }
                return true
            }
            return rows
        }
        snapshot.prunedThrough = rows.counter.prunedThrough
        snapshot.problems += rows.problems(lastToken: token.position)
        do {
            snapshot.entries = try container.history()
        } catch let error as KVStoreError where error.kind == KVStoreError.damaged.kind {
            snapshot.problems.append("an entry does not decode: \(error.message)")
            return snapshot
        }
        let read = snapshot.entries.map(\.token.position)
        if read != rows.positions.filter({ $0 > rows.counter.prunedThrough }) {
            snapshot.problems.append(
                "history() read the entries at \(Self.ranges(read)), and the table holds rows at "
                    + Self.ranges(rows.positions))
        }
        if let stranger = snapshot.entries.first(where: { $0.token.storeID != token.storeID }) {
            snapshot.problems.append(
                "the entry at \(stranger.token.position) names the history \(stranger.token.storeID), not "
                    + "\(token.storeID)")
        }
        return snapshot
    }

    /// The history table's rows, as scanned.
    private struct Rows {
        var counter: HistoryTable.Counter
        var positions: [UInt64] = []
        var hasCounter = false
        var badKeys = 0

        /// What is wrong with the rows: they must be the counter and one entry at each position after the last one
        /// pruned, up to the last one given, which `lastHistoryToken()` must name.
        func problems(lastToken: UInt64) -> [String] {
            var problems: [String] = []
            if lastToken != counter.last {
                problems.append("lastHistoryToken() is at \(lastToken), and the counter at \(counter.last)")
            }
            if counter.prunedThrough > counter.last {
                problems.append(
                    "the counter was pruned through \(counter.prunedThrough), past its last position \(counter.last)")
            }
            if badKeys > 0 { problems.append("\(badKeys) rows have a key that is not a position") }
            if !hasCounter && (counter.last > 0 || !positions.isEmpty) {
                problems.append("the counter row is missing, and the table holds \(positions.count) entries")
            }
            let expected = counter.last > counter.prunedThrough ? Array(counter.prunedThrough + 1...counter.last) : []
            if positions != expected {
                let stale = positions.filter { $0 <= counter.prunedThrough }
                let beyond = positions.filter { $0 > counter.last }
                let gaps = Set(expected).subtracting(positions).sorted()
                var parts = ["the rows are at \(HistorySnapshot.ranges(positions))"]
                if !stale.isEmpty {
                    parts.append("\(stale.count) at or before the pruned-through \(counter.prunedThrough)")
                }
                if !beyond.isEmpty { parts.append("\(beyond.count) after the last position \(counter.last)") }
                if !gaps.isEmpty { parts.append("positions missing: \(HistorySnapshot.ranges(gaps))") }
                problems.append(
                    "the positions are not dense from \(counter.prunedThrough + 1) to \(counter.last): "
                        + parts.joined(separator: "; "))
            }
            return problems
        }
    }

    /// Sorted positions as ranges, `1...4, 7, 9...12`, or `none`.
    static func ranges(_ positions: [UInt64]) -> String {
        var parts: [String] = []
        var index = positions.startIndex
        while index < positions.endIndex {
            var end = index
            while end + 1 < positions.endIndex, positions[end + 1] == positions[end] + 1 { end += 1 }
            parts.append(end == index ? "\(positions[index])" : "\(positions[index])...\(positions[end])")
            index = end + 1
        }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }

    // MARK: - Net effect

    /// The last change of each model in the entries kept, and the position of its entry: what replaying them
    /// leaves.
    func netEffect() -> [ChangeSet.ModelID: (change: ChangeSet.Change, position: UInt64)] {
        var net: [ChangeSet.ModelID: (change: ChangeSet.Change, position: UInt64)] = [:]
        for entry in entries {
            for change in entry.changes { net[change.model] = (change, entry.token.position) }
        }
        return net
    }

    /// How the entries kept disagree with the models the store holds: a model whose last change saved it must be
    /// there, one whose last change deleted it must not; when nothing was ever pruned (`prunedThrough` 0) and
    /// `complete` says the history started with the store, every model the store holds must have been saved by an
    /// entry. `stored` lists the store's models.
    func dataDifferences(stored: Set<ChangeSet.ModelID>, complete: Bool, limit: Int = 5) -> [String] {
        var missing: [String] = []
        var present: [String] = []
        var saved: Set<ChangeSet.ModelID> = []
        for (model, last) in netEffect() {
            if last.change.isSave {
                saved.insert(model)
                if !stored.contains(model) {
                    missing.append("\(model) (\(ExpectedHistoryEntry.text(last.change.kind)) at \(last.position))")
                }
            } else if stored.contains(model) {
                present.append("\(model) (\(ExpectedHistoryEntry.text(last.change.kind)) at \(last.position))")
            }
        }
        var lines: [String] = []
        func report(_ what: String, _ items: [String]) {
            guard !items.isEmpty else { return }
            let more = items.count > limit ? " and \(items.count - limit) more" : ""
            lines.append("\(items.count) \(what): \(items.sorted().prefix(limit).joined(separator: ", "))\(more)")
        }
        report("models the history last saved are not in the store", missing)
        report("models the history last deleted are in the store", present)
        if complete && prunedThrough == 0 {
            report(
                "models of the store no entry saved (the history is whole)",
                stored.subtracting(saved).map { "\($0)" })
        }
        return lines
    }
}
