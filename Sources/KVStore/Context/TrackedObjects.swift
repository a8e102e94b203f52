import Foundation

/// A context's ``PersistentModel`` objects: one per entity and ID (its identity map), each with what it was fetched
/// or last saved with, against which a save finds what changed.
///
/// The map holds its objects strongly, so that a change made through a reference nobody keeps
/// (`try context.fetch(descriptor)[0].isDone = true`) is still saved. It lets go of the objects that nothing else
/// references once they match their stored records: those could not change any more, and the store holds their
/// values. A read and a save let go of the unchanged ones in the pass that looks for changes (see
/// ``Table/forEachPossiblyChanged(relationshipsAt:includingDeleted:includingInserted:releasingUnreferenced:_:)``), a
/// save of the ones it wrote as it takes their snapshots, and a rollback of all of them after it
/// (``releaseUnreferenced()``).
struct TrackedObjects {
    /// What an object held when the context last knew it to match its stored record.
    enum Snapshot {
        /// A copy of its attributes, for a class with an ``ObjectLayout``; its stored relationships keep their saved
        /// IDs in their own states (``RelatedObjects``).
        case fields(FieldShadow)
        /// Its encoding, for any other class.
        case record([UInt8])
    }

    /// Where an object stands.
    enum State {
        /// Fetched from the store (or saved by the context): written again when it no longer matches `snapshot`.
        case stored(Snapshot)
        /// Inserted, not saved yet.
        case inserted
        /// Deleted, not saved yet; `snapshot` is what it held as stored, for a rollback.
        case deleted(Snapshot?)
    }

    /// An object and where it stands. The object's type is the one its table is for: entries are not generic, so
    /// that code generic over the model type (a context's, unspecialized for the caller's types) looks up no type
    /// metadata per object.
    struct Entry {
        var object: AnyObject
        var state: State
    }

    /// The objects of one model type, by ID.
    final class Table {
        var byID: [ModelKey: Entry] = [:]
        /// Whether a pending change was recorded for a stored or deleted object of the table (one that no longer
        /// matched its snapshot, or a delete) since the last save or rollback: the object may have been changed back
        /// or inserted again since, and a save must then forget that change.
        var hasRecordedStoredChanges = false
        /// Whether an inserted object of the table may lack its pending insert: a save forgot the pending changes
        /// and its effects on the table did not complete (see `ModelContext.save()`). Recording changes then checks
        /// each inserted object; otherwise each has the pending insert its insert recorded, and they are passed
        /// over.
        var insertsMayBeUnrecorded = false
        /// Whether nothing else references an object of the table's type.
        let isUniquelyReferenced: (inout AnyObject) -> Bool
        /// What a context's saves and rollbacks do to the objects of the table's type.
        let operations: any TrackedTypeOperations

        init(isUniquelyReferenced: @escaping (inout AnyObject) -> Bool, operations: any TrackedTypeOperations) {
            self.isUniquelyReferenced = isUniquelyReferenced
            self.operations = operations
        }

        /// Puts `object`, with `id`, in the table as stored with `snapshot`.
        func setStored(_ object: AnyObject, id: UUID, snapshot: Snapshot) {
            byID[ModelKey(id)] = Entry(object: object, state: .stored(snapshot))
        }

        /// Calls `body` with each entry whose object may hold other values than its stored record: an inserted one, a
        /// stored one with a record snapshot (only an encoding compares it), and a stored one with a field shadow
        /// whose bytes, or whose relationship states' IDs (at `offsets`), it no longer matches; and a deleted one
        /// when `includingDeleted`, an inserted one unless not `includingInserted`. The comparisons read the objects in place, with no type metadata or encoding per
        /// object.
        ///
        /// When `releasingUnreferenced`, the same pass lets go of the stored objects that match their shadows and
        /// that nothing outside the table references, as ``releaseUnreferenced()`` does after a save: nothing can
        /// change them any more, and the store holds their values. A context that only reads then holds the objects
        /// its program keeps, not every object it ever fetched, and each read's check stays as small.
        ///
        /// - Throws: What `body` throws.
        func forEachPossiblyChanged(
            relationshipsAt offsets: [Int], includingDeleted: Bool = false, includingInserted: Bool = true,
            releasingUnreferenced: Bool = false, _ body: (Entry) throws -> Void
        ) rethrows {
            var unreferenced: [ModelKey] = []
            let found = possiblyChanged(
                relationshipsAt: offsets, includingDeleted: includingDeleted, includingInserted: includingInserted,
                collectingUnreferenced: releasingUnreferenced, into: &unreferenced)
            for key in unreferenced { byID[key] = nil }
            for entry in found { try body(entry) }
        }

        /// The entries that ``mayDiffer(_:relationshipsAt:includingDeleted:includingInserted:)``, and in `unreferenced`, when
        /// `collectingUnreferenced`, the keys of the unchanged stored ones that nothing else references: indexes walked by hand and entries read
        /// in place (as in `releaseUnreferenced()`), in one access to the table's dictionary, because a copy of each
        /// entry would retain and release its object and snapshot, which costs more than the comparison.
        private func possiblyChanged(
            relationshipsAt offsets: [Int], includingDeleted: Bool, includingInserted: Bool,
            collectingUnreferenced: Bool, into unreferenced: inout [ModelKey]
        ) -> [Entry] {
            // The table's dictionary is passed `inout` to a function that walks it: one exclusive access to the
            // property for the whole walk, where each `byID.values[index]` of a loop here would begin and end one
            // (a run-time check each, a quarter of the walk). The walk calls nothing that reaches the table.
            Self.possiblyChanged(
                in: &byID, relationshipsAt: offsets, includingDeleted: includingDeleted,
                includingInserted: includingInserted,
                unreferencedBy: collectingUnreferenced ? isUniquelyReferenced : nil, into: &unreferenced)
        }

        /// ``possiblyChanged(relationshipsAt:includingDeleted:includingInserted:collectingUnreferenced:into:)`` on
        /// `entries`; `isUniquelyReferenced`, when given, collects the unchanged stored objects nothing else
        /// references.
        private static func possiblyChanged(
            in entries: inout [ModelKey: Entry], relationshipsAt offsets: [Int], includingDeleted: Bool,
            includingInserted: Bool, unreferencedBy isUniquelyReferenced: ((inout AnyObject) -> Bool)?,
            into unreferenced: inout [ModelKey]
        ) -> [Entry] {
            var found: [Entry] = []
            var index = entries.startIndex
            while index != entries.endIndex {
                if mayDiffer(
                    &entries.values[index], relationshipsAt: offsets, includingDeleted: includingDeleted,
                    includingInserted: includingInserted)
                {
                    found.append(entries.values[index])
                } else if let isUniquelyReferenced,
                    isUnreferenced(&entries.values[index], isUniquelyReferenced: isUniquelyReferenced)
                {
                    unreferenced.append(entries.keys[index])
                }
                entries.formIndex(after: &index)
            }
            return found
        }

        /// Whether `entry`'s object may hold other values than its stored record (see
        /// ``forEachPossiblyChanged(relationshipsAt:includingDeleted:includingInserted:releasingUnreferenced:_:)``),
        /// read in place.
        private static func mayDiffer(
            _ entry: inout Entry, relationshipsAt offsets: [Int], includingDeleted: Bool, includingInserted: Bool
        ) -> Bool {
            switch entry.state {
            case .deleted: includingDeleted
            case .inserted: includingInserted
            case .stored(.fields(let shadow)):
                ObjectContents.relatedIDsChanged(in: entry.object, at: offsets) || !shadow.matches(entry.object)
            case .stored(.record): true
            }
        }

        var hasInsertsOrDeletes: Bool {
            byID.values.contains { entry in
                if case .stored = entry.state { return false }
                return true
            }
        }

        /// Lets go of the stored objects that nothing outside the table references.
        func releaseUnreferenced() {
            let gone = Self.unreferenced(in: &byID, isUniquelyReferenced: isUniquelyReferenced)
            for id in gone { byID[id] = nil }
        }

        /// The keys of the stored entries of `entries` whose objects nothing else references, read in place, in one
        /// access to the table's dictionary.
        private static func unreferenced(
            in entries: inout [ModelKey: Entry], isUniquelyReferenced: (inout AnyObject) -> Bool
        ) -> [ModelKey] {
            var gone: [ModelKey] = []
            // Indexes walked by hand: `indices` would hold a second reference to the dictionary, and the in-place
            // access below would copy it (and its objects' references).
            var index = entries.startIndex
            while index != entries.endIndex {
                if isUnreferenced(&entries.values[index], isUniquelyReferenced: isUniquelyReferenced) {
                    gone.append(entries.keys[index])
                }
                entries.formIndex(after: &index)
            }
            return gone
        }

        /// Calls `body` with the entries, in one exclusive access to them: `body` must not reach the table otherwise.
        ///
        /// - Throws: What `body` throws.
        func withEntries<Result>(_ body: (inout [ModelKey: Entry]) throws -> Result) rethrows -> Result {
            try body(&byID)
        }

        /// Whether `entry` is stored and nothing else references its object, read in place.
        private static func isUnreferenced(
            _ entry: inout Entry, isUniquelyReferenced: (inout AnyObject) -> Bool
        ) -> Bool {
            guard case .stored = entry.state else { return false }
            return isUniquelyReferenced(&entry.object)
        }
    }

    /// Whether nothing but the variable references an object of `M`: the standard library's check, made on the
    /// object as an `M` (on an `AnyObject` it answers `false` for some objects referenced once). The variable's
    /// reference moves to a typed one for the check and back, so that the count is the same.
    private static func uniquenessCheck<M: PersistentModel>(_: M.Type) -> (inout AnyObject) -> Bool {
        { object in
            var typed = knownTypeDowncast(object, to: M.self)
            object = Vacancy.shared
            defer { object = typed }
            return isKnownUniquelyReferenced(&typed)
        }
    }

    /// What an entry's object variable holds while its reference is checked.
    private final class Vacancy: Sendable {
        static let shared = Vacancy()
    }

    /// The entries of each model type.
    /// The tables in the order they were made, found by a linear search: a context holds objects of a few types,
    /// and comparing a few identifiers costs less than hashing one, which every insert and lookup would.
    private(set) var tables: [(type: ObjectIdentifier, table: Table)] = []

    /// The table of `M`, when the map has one.
    func table<M: PersistentModel>(_: M.Type) -> Table? {
        let type = ObjectIdentifier(M.self)
        for entry in tables where entry.type == type { return entry.table }
        return nil
    }

    /// The table of `M`, made when the map has none.
    mutating func table<M: PersistentModel>(for _: M.Type) -> Table {
        if let table = table(M.self) { return table }
        let table = Table(isUniquelyReferenced: Self.uniquenessCheck(M.self), operations: TrackedType<M>())
        tables.append((ObjectIdentifier(M.self), table))
        return table
    }

    /// Whether an object was inserted or deleted and not saved yet.
    var hasInsertsOrDeletes: Bool {
        tables.contains { $0.table.hasInsertsOrDeletes }
    }

    /// The number of objects of `type` in the map.
    func count<M: PersistentModel>(of type: M.Type) -> Int {
        table(M.self)?.byID.count ?? 0
    }

    /// The object of `type` with `id`, while one is in the map.
    func held<M: PersistentModel>(_ type: M.Type, id: UUID) -> M? {
        guard let entry = table(M.self)?.byID[ModelKey(id)] else { return nil }
        return knownTypeDowncast(entry.object, to: M.self)
    }

    /// The object of `type` with `id` and its state, while one is in the map.
    func entry<M: PersistentModel>(_ type: M.Type, id: UUID) -> (object: M, state: State)? {
        guard let entry = table(M.self)?.byID[ModelKey(id)] else { return nil }
        return (knownTypeDowncast(entry.object, to: M.self), entry.state)
    }

    /// The state of the object of `type` with `id`.
    func state<M: PersistentModel>(of type: M.Type, id: UUID) -> State? {
        table(M.self)?.byID[ModelKey(id)]?.state
    }

    /// Whether `object` is the one the map holds for its ID and is deleted there.
    func isDeleted<M: PersistentModel>(_ object: M) -> Bool {
        guard let entry = table(M.self)?.byID[ModelKey(object.id)], entry.object === object, case .deleted = entry.state
        else { return false }
        return true
    }

    /// Puts `object` in the map, in `state`.
    mutating func set<M: PersistentModel>(_ object: M, _ state: State) {
        table(for: M.self).byID[ModelKey(object.id)] = Entry(object: object, state: state)
    }

    /// Takes the object of `type` with `id` out of the map.
    mutating func remove<M: PersistentModel>(_ type: M.Type, id: UUID) {
        table(M.self)?.byID[ModelKey(id)] = nil
    }

    /// Calls `body` with each object of `type` in the map and its state, as the map stood when the call began:
    /// `body` may change the map.
    func forEachObject<M: PersistentModel>(of type: M.Type, _ body: (M, State) throws -> Void) rethrows {
        guard let entries = table(M.self)?.byID else { return }
        for entry in entries.values {
            try body(knownTypeDowncast(entry.object, to: M.self), entry.state)
        }
    }

    /// The objects of `type` in the map, with their states.
    func objects<M: PersistentModel>(of type: M.Type) -> [(object: M, state: State)] {
        var objects: [(object: M, state: State)] = []
        forEachObject(of: M.self) { objects.append(($0, $1)) }
        return objects
    }

    /// The operations on the objects of each type in the map, in the order their tables were made.
    var operations: [any TrackedTypeOperations] {
        tables.map(\.table.operations)
    }

    /// Lets go of the stored objects that nothing outside the map references.
    func releaseUnreferenced() {
        for entry in tables { entry.table.releaseUnreferenced() }
    }

    /// Forgets every object.
    mutating func removeAll() {
        tables.removeAll()
    }
}
