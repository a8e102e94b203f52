import Foundation
import KVStore

/// The change history a round of `crashtest mixed` must leave: the parent switches history on and seeds the store
/// in one commit (position 1); then each save an old-schema writer saw commit has an entry, the two writers'
/// interleaved in commit order, and the migration, which records no entry, adds none; then each commit of the
/// new-schema writer has one, the in-flight one included when the store shows it committed.
struct MixedHistory {
    /// The notes of the seeding commit.
    var seeded: [UUID]
    /// The saves each old-schema writer saw commit, in its order.
    var oldSaves: [[UUID]]
    /// The new-schema writer's committed operations, in order.
    var newOperations: [NewSchemaWriter.Operation]

    /// How many saves the old-schema writers saw commit.
    var oldCount: Int {
        oldSaves.reduce(0) { $0 + $1.count }
    }

    /// The position the history must end at.
    var expectedLast: UInt64 {
        UInt64(1 + oldCount + newOperations.count)
    }

    /// What is wrong with `snapshot`, the history read after the round, given the notes the store holds.
    func problems(in snapshot: HistorySnapshot, stored: Set<UUID>) -> [String] {
        var problems = snapshot.problems.map { "the history is malformed: \($0)" }
        if snapshot.last != expectedLast {
            problems.append(
                "the history's last position is \(snapshot.last), and the writers' acknowledged commits put it at "
                    + "\(expectedLast): 1 for the seeding commit, \(oldCount) old-schema saves, "
                    + "\(newOperations.count) new-schema commits")
        }
        let seeding = ExpectedHistoryEntry(
            label: "the seeding commit",
            changes: Dictionary(
                uniqueKeysWithValues: seeded.map { (ChangeSet.ModelID(MixedV2.Note.self, id: $0), .inserted) }))
        if let entry = snapshot.entry(at: 1) {
            problems += seeding.differences(from: entry).map { "history entry 1, of the seeding commit: \($0)" }
        }
        problems += oldSaveProblems(in: snapshot)
        let first = UInt64(2 + oldCount)
        for (offset, operation) in newOperations.enumerated() {
            let position = first + UInt64(offset)
            guard let entry = snapshot.entry(at: position) else { continue }
            let label = "new-schema commit \(offset + 1) (\(operation.kind) \(operation.id))"
            let differences = operation.expectedEntry(label: label).differences(from: entry)
            guard !differences.isEmpty else { continue }
            problems.append(
                "history entry \(position), of \(label), is not what it committed:\n    "
                    + differences.joined(separator: "\n    "))
            break
        }
        let models = Set(stored.map { ChangeSet.ModelID(MixedV2.Note.self, id: $0) })
        problems += snapshot.dataDifferences(stored: models, complete: true).map {
            "replaying the \(snapshot.entries.count) history entries kept disagrees with the store: \($0)"
        }
        return problems
    }

    /// The entries of the old-schema saves still kept: each the insert of one note a writer saw saved, and each
    /// writer's the last ones it saved, in its order.
    private func oldSaveProblems(in snapshot: HistorySnapshot) -> [String] {
        var owner: [UUID: (writer: Int, index: Int)] = [:]
        for (writer, saves) in oldSaves.enumerated() {
            for (index, id) in saves.enumerated() { owner[id] = (writer, index) }
        }
        var problems: [String] = []
        var kept = oldSaves.map { _ in [Int]() }
        for position in UInt64(2)..<UInt64(2 + oldCount) {
            guard let entry = snapshot.entry(at: position) else { continue }
            guard entry.changes.count == 1, let change = entry.changes.first, change.kind == .inserted,
                change.entity == MixedV2.Note.entity.name, let (writer, index) = owner[change.id],
                entry.tombstones.isEmpty
            else {
                let changes = entry.changes.prefix(3).map { "\($0.model) \(ExpectedHistoryEntry.text($0.kind))" }
                problems.append(
                    "history entry \(position) is not the insert of a note an old-schema writer saw saved: it has "
                        + "\(entry.changes.count) changes (\(changes.joined(separator: ", "))) and "
                        + "\(entry.tombstones.count) tombstones")
                continue
            }
            kept[writer].append(index)
        }
        for (writer, indexes) in kept.enumerated() {
            let count = oldSaves[writer].count
            guard indexes != Array(count - indexes.count..<count) else { continue }
            problems.append(
                "the entries of old-schema writer \(writer + 1)'s \(count) saves are not its last \(indexes.count) "
                    + "in order: they are its saves \(indexes.prefix(10).map { String($0 + 1) }) (pruned through "
                    + "\(snapshot.prunedThrough))")
        }
        return problems
    }
}
