import Foundation
import KVStore
import TestSupport

/// The writer of the new schema in `crashtest mixed`: once the migration is over, it inserts, updates and deletes
/// notes of schema 2.0.0, one commit each, until the parent kills it.
///
/// Before each commit it writes an intent line on standard output (`intent insert <id>`, `intent update <id>
/// <title>`, `intent delete <id>`) and after it `done`, so the parent knows every acknowledged commit and the one in
/// flight at the kill (``NewSchemaWriter/Operation``).
enum NewSchemaWriter {
    /// One write of the new-schema writer, as its lines tell it.
    struct Operation: Equatable {
        enum Kind: String {
            case insert, update, delete
        }

        var kind: Kind
        var id: UUID
        /// The title an update gives.
        var title: String?
        /// Whether the writer saw it commit (`done`); the last operation may be in flight instead.
        var acknowledged: Bool

        /// What its history entry must say.
        func expectedEntry(label: String) -> ExpectedHistoryEntry {
            let model = ChangeSet.ModelID(MixedV2.Note.self, id: id)
            switch kind {
            case .insert: return ExpectedHistoryEntry(label: label, changes: [model: .inserted])
            case .update: return ExpectedHistoryEntry(label: label, changes: [model: .updated])
            // The note keeps no value on deletion: its tombstone keeps no field.
            case .delete: return ExpectedHistoryEntry(label: label, changes: [model: .deleted], kept: [model: [:]])
            }
        }

        /// Whether the store's notes, by ID, show the operation committed.
        func committed(in notes: [UUID: MixedV2.Note]) -> Bool {
            switch kind {
            case .insert: notes[id] != nil
            case .update: notes[id]?.title == title
            case .delete: notes[id] == nil
            }
        }
    }

    /// The operations in the writer's `lines`, in order, or a description of the first line that does not parse.
    static func operations(in lines: [String]) -> Result<[Operation], CrashTestError> {
        var operations: [Operation] = []
        for line in lines where line != "ready" {
            let words = line.split(separator: " ", maxSplits: 3).map(String.init)
            if words == ["done"], let last = operations.last, !last.acknowledged {
                operations[operations.count - 1].acknowledged = true
                continue
            }
            guard words.count >= 3, words[0] == "intent", let kind = Operation.Kind(rawValue: words[1]),
                let id = UUID(uuidString: words[2]), operations.last?.acknowledged ?? true
            else { return .failure(CrashTestError("the new-schema writer wrote '\(line)'")) }
            operations.append(
                Operation(kind: kind, id: id, title: words.count > 3 ? words[3] : nil, acknowledged: false))
        }
        return .success(operations)
    }

    /// The child: opens the store with the new schema (finishing a migration left half-way), says `ready`, and
    /// writes until it is killed.
    static func run(store: String, seed: UInt64) throws -> Int32 {
        let container = try ModelContainer(
            for: MixedV2.self, migrationPlan: MixedPlan.self, configuration: MixedVersionRun.configuration(store))
        var ids = try ModelContext(container).fetch(FetchDescriptor<MixedV2.Note>()).map(\.id).sorted {
            $0.uuidString < $1.uuidString
        }
        var random = SplitMix64(seed: seed)
        LineChild.report("ready")
        for index in 0..<1_000_000 {
            let pick = random.next() % 4
            if pick < 2 || ids.isEmpty {
                let note = MixedV2.Note(id: .timeOrdered(), title: "new \(index % 20)", body: "one two three", words: 3)
                LineChild.report("intent insert \(note.id)")
                try container.write { txn in _ = try txn.insert(note) }
                ids.append(note.id)
            } else {
                let at = Int(random.next() % UInt64(ids.count))
                let id = ids[at]
                if pick == 2 {
                    let note = MixedV2.Note(id: id, title: "updated-\(index)", body: "one two three", words: 3)
                    LineChild.report("intent update \(id) \(note.title)")
                    try container.write { txn in _ = try txn.insert(note) }
                } else {
                    LineChild.report("intent delete \(id)")
                    try container.write { txn in _ = try txn.delete(MixedV2.Note.self, id: id) }
                    ids.remove(at: at)
                }
            }
            LineChild.report("done")
        }
        return 0
    }
}
