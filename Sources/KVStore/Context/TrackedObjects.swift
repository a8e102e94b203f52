import Foundation

/// A context's ``PersistentModel`` objects: one per entity and ID (its identity map), each with the encoding it was
/// fetched or last saved with, against which a save finds what changed.
///
/// Objects are held strongly from the moment the context hands them out (a fetch, a lookup, a relationship property)
/// or sees their relationships change, until its next save or rollback, so that a change made through a reference
/// nobody keeps (`try context.fetch(descriptor)[0].isDone = true`) is still saved; in between, the context keeps them
/// weakly, and an object nobody holds leaves it.
struct TrackedObjects {
    /// Where an object stands.
    enum State {
        /// Fetched from the store (or saved by the context): written again when its encoding differs from
        /// `snapshot`.
        case stored(snapshot: [UInt8])
        /// Inserted, not saved yet.
        case inserted
        /// Deleted, not saved yet; `snapshot` is its encoding as stored, for a rollback.
        case deleted(snapshot: [UInt8]?)
    }

    struct Entry {
        /// The object while the context holds it strongly.
        var strong: AnyObject?
        /// The object.
        weak var object: AnyObject?
        var state: State
    }

    /// The entries of each model type, by ID.
    private(set) var entries: [ObjectIdentifier: [UUID: Entry]] = [:]

    /// Whether an object was inserted or deleted and not saved yet.
    var hasInsertsOrDeletes: Bool {
        entries.values.contains { byID in
            byID.values.contains { entry in
                if case .stored = entry.state { return false }
                return entry.object != nil
            }
        }
    }

    /// The object of `type` with `id`, while one is in the map.
    func held<M: PersistentModel>(_ type: M.Type, id: UUID) -> M? {
        entries[ObjectIdentifier(M.self)]?[id]?.object as? M
    }

    /// The state of the object of `type` with `id`.
    func state<M: PersistentModel>(of type: M.Type, id: UUID) -> State? {
        guard let entry = entries[ObjectIdentifier(M.self)]?[id], entry.object != nil else { return nil }
        return entry.state
    }

    /// Whether `object` is the one the map holds for its ID and is deleted there.
    func isDeleted<M: PersistentModel>(_ object: M) -> Bool {
        guard let entry = entries[ObjectIdentifier(M.self)]?[object.id], entry.object === object,
            case .deleted = entry.state
        else { return false }
        return true
    }

    /// Puts `object` in the map, held strongly, in `state`.
    mutating func set<M: PersistentModel>(_ object: M, _ state: State) {
        entries[ObjectIdentifier(M.self), default: [:]][object.id] = Entry(strong: object, object: object, state: state)
    }

    /// Holds `object`, which the map has, strongly until the next save or rollback: the context hands it out, or it
    /// changes.
    mutating func hold<M: PersistentModel>(_ object: M) {
        let type = ObjectIdentifier(M.self)
        guard let entry = entries[type]?[object.id], entry.strong == nil, entry.object === object else { return }
        entries[type]?[object.id]?.strong = object
    }

    /// Takes the object of `type` with `id` out of the map.
    mutating func remove<M: PersistentModel>(_ type: M.Type, id: UUID) {
        entries[ObjectIdentifier(M.self)]?[id] = nil
    }

    /// Calls `body` with each object of `type` in the map and its state; `body` must not change the map (the
    /// context's `tracked` is being read): list the objects with ``objects(of:)`` for work that may.
    func forEachObject<M: PersistentModel>(of type: M.Type, _ body: (M, State) throws -> Void) rethrows {
        guard let byID = entries[ObjectIdentifier(M.self)] else { return }
        for entry in byID.values {
            guard let object = entry.object as? M else { continue }
            try body(object, entry.state)
        }
    }

    /// The objects of `type` in the map, with their states.
    func objects<M: PersistentModel>(of type: M.Type) -> [(object: M, state: State)] {
        var objects: [(object: M, state: State)] = []
        forEachObject(of: M.self) { objects.append(($0, $1)) }
        return objects
    }

    /// The model types of the objects in the map.
    var types: [ObjectIdentifier] {
        Array(entries.keys)
    }

    /// Lets go of the strong references, and of the entries whose objects are gone.
    mutating func holdWeakly() {
        for type in Array(entries.keys) {
            guard var byID = entries.removeValue(forKey: type) else { continue }
            var gone: [UUID] = []
            for index in byID.indices {
                byID.values[index].strong = nil
                if byID.values[index].object == nil { gone.append(byID.keys[index]) }
            }
            for id in gone { byID[id] = nil }
            if !byID.isEmpty { entries[type] = byID }
        }
    }

    /// Forgets every object.
    mutating func removeAll() {
        entries.removeAll()
    }
}
