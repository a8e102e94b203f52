import Foundation

/// A context's ``PersistentModel`` objects: one per entity and ID (its identity map), each with the encoding it was
/// fetched or last saved with, against which a save finds what changed.
///
/// Objects are held strongly from the moment the context hands them out (a fetch, a lookup, a relationship property)
/// or sees their relationships change, until its next save or rollback, so that a change made through a reference
/// nobody keeps (`try context.fetch(descriptor)[0].isDone = true`) is still saved; in between, the context keeps them
/// weakly, and an object nobody holds leaves it.
struct TrackedObjects {
    /// An object's identity in the map: its model type and ID.
    struct Key: Hashable {
        let type: ObjectIdentifier
        let id: UUID
    }

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

    private(set) var entries: [Key: Entry] = [:]

    /// Whether the map holds no objects, or only ones it would save nothing of without comparing encodings.
    var hasInsertsOrDeletes: Bool {
        entries.values.contains { entry in
            if case .stored = entry.state { return false }
            return true
        }
    }

    /// The object of `type` with `id`, while one is in the map.
    func held<M: PersistentModel>(_ type: M.Type, id: UUID) -> M? {
        entries[Key(type: ObjectIdentifier(M.self), id: id)]?.object as? M
    }

    /// The state of the object of `type` with `id`.
    func state<M: PersistentModel>(of type: M.Type, id: UUID) -> State? {
        let key = Key(type: ObjectIdentifier(M.self), id: id)
        guard let entry = entries[key], entry.object != nil else { return nil }
        return entry.state
    }

    /// Whether `object` is the one the map holds for its ID and is deleted there.
    func isDeleted(_ object: some PersistentModel) -> Bool {
        guard let entry = entries[Key(type: ObjectIdentifier(type(of: object)), id: object.id)],
            entry.object === object, case .deleted = entry.state
        else { return false }
        return true
    }

    /// Puts `object` in the map, held strongly, in `state`.
    mutating func set<M: PersistentModel>(_ object: M, _ state: State) {
        entries[Key(type: ObjectIdentifier(M.self), id: object.id)] = Entry(
            strong: object, object: object, state: state)
    }

    /// Holds `object`, which the map has, strongly until the next save or rollback: the context hands it out, or it
    /// changes.
    mutating func hold<M: PersistentModel>(_ object: M) {
        let key = Key(type: ObjectIdentifier(M.self), id: object.id)
        guard entries[key]?.object === object, entries[key]?.strong == nil else { return }
        entries[key]?.strong = object
    }

    /// Takes the object of `type` with `id` out of the map.
    mutating func remove<M: PersistentModel>(_ type: M.Type, id: UUID) {
        entries[Key(type: ObjectIdentifier(M.self), id: id)] = nil
    }

    /// The objects of `type` in the map, with their states.
    func objects<M: PersistentModel>(of type: M.Type) -> [(object: M, state: State)] {
        let identifier = ObjectIdentifier(M.self)
        return entries.compactMap { key, entry in
            guard key.type == identifier, let object = entry.object as? M else { return nil }
            return (object, entry.state)
        }
    }

    /// The model types of the objects in the map.
    var types: Set<ObjectIdentifier> {
        Set(entries.keys.map(\.type))
    }

    /// Lets go of the strong references, and of the entries whose objects are gone.
    mutating func holdWeakly() {
        entries = entries.filter { $0.value.object != nil }
        for key in entries.keys { entries[key]?.strong = nil }
    }

    /// Forgets every object.
    mutating func removeAll() {
        entries.removeAll()
    }
}
