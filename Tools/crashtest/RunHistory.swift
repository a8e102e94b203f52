import Foundation
import KVStore

/// The change history `crashtest run`'s store must have, from its expectation log, and the check of it after a kill.
///
/// Every writer switches history on before its first transaction (``Writer/historyRetention(seed:)``), so every
/// transaction that changed models has an entry, one position after the one before. The parent notes each
/// transaction the log says committed (the in-flight one too, once the store shows it committed); after the kill the
/// history must end at the position they add up to, each entry still kept must say what its transaction changed,
/// and replaying the kept entries must agree with the models the store holds.
final class RunHistory {
    /// The history's last position at the last check.
    private var position: UInt64 = 0
    /// The transaction of the entry at `position`: the history's last entry stays it until another transaction
    /// changes models.
    private var last: ExpectedHistoryEntry?
    /// The transactions that changed models since the last check, in commit order.
    private var recorded: [ExpectedHistoryEntry] = []

    /// How many entries were compared with their transactions.
    private(set) var entriesChecked = 0
    /// How many entries the writers' retention pruned before a check could read them.
    private(set) var entriesPrunedUnseen = 0
    /// The most entries a check found kept.
    private(set) var mostKept = 0

    /// Forgets the store: a new one starts without history.
    func reset() {
        position = 0
        last = nil
        recorded = []
    }

    /// Notes that the transaction `intent` committed `delta` over `before`: when it changed models, its entry is
    /// the next one.
    func committed(_ intent: LogLine, delta: Delta, before: StoreState) {
        let entry = ExpectedHistoryEntry(
            label: "transaction \(intent.sequence) (\(intent.operation ?? "?"))", delta: delta, before: before)
        if !entry.isEmpty { recorded.append(entry) }
    }

    /// Checks the history of the store at `path`, open in `container`, whose models are `state`; returns the
    /// problems, each starting with `context`.
    ///
    /// - Throws: What reading the store throws (but for a damaged entry, a problem).
    func check(_ context: String, container: ModelContainer, path: String, state: StoreState) throws -> [String] {
        let expectedLast = position + UInt64(recorded.count)
        guard let snapshot = try HistorySnapshot.read(from: container, path: path) else {
            // A writer killed before it switched history on leaves none, and committed nothing.
            if expectedLast == 0 { return [] }
            return ["\(context): the store records no history, and the log has \(expectedLast) entries' worth"]
        }
        var problems = snapshot.problems.map { "\(context): the history is malformed: \($0)" }
        mostKept = max(mostKept, snapshot.entries.count)
        let lastMatches = snapshot.last == expectedLast
        if !lastMatches {
            let since = recorded.last.map { ", the last \($0.label)" } ?? ""
            problems.append(
                "\(context): the history's last position is \(snapshot.last), and the log puts it at \(expectedLast) "
                    + "(\(position) at the last check, and \(recorded.count) transactions that changed models "
                    + "since\(since))")
        }
        // Each transaction since the last check at its position; with none, the last entry is still the one before.
        var checks = recorded.enumerated().map { (position + UInt64($0.offset) + 1, $0.element) }
        if checks.isEmpty, let last { checks = [(position, last)] }
        var entryDiffers = false
        for (at, expected) in checks {
            guard let entry = snapshot.entry(at: at) else {
                if at == snapshot.last {
                    problems.append(
                        "\(context): the history's last entry \(at), of \(expected.label), is gone (pruned through "
                            + "\(snapshot.prunedThrough))")
                } else if lastMatches {
                    entriesPrunedUnseen += 1
                }
                continue
            }
            entriesChecked += 1
            let differences = expected.differences(from: entry)
            guard !differences.isEmpty else { continue }
            entryDiffers = true
            problems.append(
                "\(context): history entry \(at), for \(expected.label), is not what that transaction changed:\n    "
                    + differences.joined(separator: "\n    "))
            // Past a missing or extra entry, every entry is off by one: the first tells.
            if !lastMatches { break }
        }
        guard lastMatches else {
            if !entryDiffers { problems.append(offByOne(context, snapshot: snapshot, expectedLast: expectedLast)) }
            return problems
        }
        problems += snapshot.dataDifferences(stored: state.modelIDs, complete: true).map {
            "\(context): replaying the \(snapshot.entries.count) history entries kept (\(snapshot.prunedThrough + 1)"
                + "...\(snapshot.last)) disagrees with the store: \($0)"
        }
        if problems.isEmpty {
            position = snapshot.last
            last = recorded.last ?? last
            recorded = []
        }
        return problems
    }
}

extension RunHistory {
    /// What the history lacks or has too much at its end, when every entry it keeps matched its transaction.
    private func offByOne(_ context: String, snapshot: HistorySnapshot, expectedLast: UInt64) -> String {
        if snapshot.last < position {
            return "\(context): the history went back from position \(position) at the last check"
        }
        if snapshot.last < expectedLast {
            let first = Int(snapshot.last - position)
            let missing = recorded[first...].map(\.label)
            return "\(context): the entries kept match their transactions, and the entries of the last "
                + "\(missing.count) are missing: \(missing.prefix(3).joined(separator: ", "))"
        }
        let extra = snapshot.entries.filter { $0.token.position > expectedLast }.prefix(3).map { entry in
            "entry \(entry.token.position) with \(entry.changes.count) changes, such as "
                + (entry.changes.first.map { "\($0.model) \(ExpectedHistoryEntry.text($0.kind))" } ?? "none")
        }
        return "\(context): the history has entries no acknowledged or in-flight transaction made: "
            + (extra.isEmpty ? "pruned" : extra.joined(separator: "; "))
    }
}

extension StoreState {
    /// The models the state holds, by entity name and ID.
    var modelIDs: Set<ChangeSet.ModelID> {
        var ids = Set(projects.keys.map { ChangeSet.ModelID(Project.self, id: $0) })
        ids.formUnion(people.keys.map { ChangeSet.ModelID(Person.self, id: $0) })
        ids.formUnion(tasks.keys.map { ChangeSet.ModelID(Task.self, id: $0) })
        return ids
    }
}
