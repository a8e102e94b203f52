import Foundation
import KVStore

/// The change history a round of `crashtest mixed` must leave: the parent switches history on and seeds the store
/// in one commit (position 1); then each save an old-schema writer saw commit has an entry, the two writers'
/// interleaved in commit order; then the migration has one entry per chunk it committed (however often it was killed
/// and resumed), authored by its stage, which together update every note once; then each commit of the new-schema
/// writer has one, the in-flight one included when the store shows it committed.
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

    /// The author of the migration's entries.
    static let migrationAuthor = "migration \(MixedV1.versionIdentifier) → \(MixedV2.versionIdentifier)"

    /// What is wrong with `snapshot`, the history read after the round, given the notes the store holds.
    func problems(in snapshot: HistorySnapshot, stored: Set<UUID>) -> [String] {
        var problems = snapshot.problems.map { "the history is malformed: \($0)" }
        // The migration's chunks are as many as committed: the positions left between the writers' say how many.
        let fixed = 1 + oldCount + newOperations.count
        guard snapshot.last >= UInt64(fixed) + 1 else {
            problems.append(
                "the history's last position is \(snapshot.last), and the writers' acknowledged commits put it at "
                    + "\(fixed) at least, with an entry for the migration's chunks: 1 for the seeding commit, "
                    + "\(oldCount) old-schema saves, \(newOperations.count) new-schema commits")
            return problems
        }
        let migrationEntries = Int(snapshot.last) - fixed
        problems += migrationProblems(in: snapshot, count: migrationEntries, stored: stored)
        let seeding = ExpectedHistoryEntry(
            label: "the seeding commit",
            changes: Dictionary(
                uniqueKeysWithValues: seeded.map { (ChangeSet.ModelID(MixedV2.Note.self, id: $0), .inserted) }))
        if let entry = snapshot.entry(at: 1) {
            problems += seeding.differences(from: entry).map { "history entry 1, of the seeding commit: \($0)" }
        }
        problems += oldSaveProblems(in: snapshot)
        let first = UInt64(2 + oldCount + migrationEntries)
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

    /// The migration's entries still kept, `count` of them after the old-schema saves: each by the migration, each an
    /// update of notes, no note twice; when all are kept, every note the migration found (the seeded ones and the
    /// old-schema saves) once.
    private func migrationProblems(in snapshot: HistorySnapshot, count: Int, stored: Set<UUID>) -> [String] {
        let first = UInt64(2 + oldCount)
        var problems: [String] = []
        var updated: Set<UUID> = []
        var allKept = true
        for position in first..<(first + UInt64(count)) {
            guard let entry = snapshot.entry(at: position) else {
                allKept = false
                continue
            }
            let notUpdates = entry.changes.filter { $0.kind != .updated || $0.entity != MixedV2.Note.entity.name }
            guard entry.author == Self.migrationAuthor, notUpdates.isEmpty, entry.tombstones.isEmpty else {
                problems.append(
                    "history entry \(position) should be a chunk of the migration (author '\(Self.migrationAuthor)', "
                        + "updates of notes only): its author is \(entry.author.map { "'\($0)'" } ?? "none"), with "
                        + "\(notUpdates.count) other changes of \(entry.changes.count)")
                continue
            }
            for change in entry.changes where !updated.insert(change.id).inserted {
                problems.append("history entry \(position), a chunk of the migration, updates \(change.id) again")
            }
        }
        let expected = Set(seeded).union(oldSaves.joined())
        if allKept, updated != expected {
            problems.append(
                "the migration's \(count) entries update \(updated.count) notes, and the store held \(expected.count) "
                    + "when it migrated (\(updated.subtracting(expected).count) unknown, "
                    + "\(expected.subtracting(updated).count) missing)")
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
