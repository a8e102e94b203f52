import Foundation

/// The state that the copies of one relationship property share: the stored IDs, the related objects once known,
/// and the context that loads them.
final class RelatedObjects {
    /// The related models' IDs, for a side that stores them (to-one, many-to-many); empty for a derived side.
    var ids: [UUID] {
        get { stored.ids }
        set {
            stored = StoredIDs(newValue)
            idsMayDiffer = true
        }
    }
    /// The first of ``ids``: a to-one side's one ID, read without making an array.
    var firstID: UUID? { stored.first }
    /// The related objects: for a stored side, those of ``ids`` in order, once assigned or loaded; for a derived
    /// side, the list once computed. `nil` until then.
    var objects: [AnyObject]?
    /// The loader's ``RelationshipLoader/relationshipGeneration`` when a derived list was computed.
    var generation = 0
    /// The context of the object the property belongs to, once it registered the object; `nil` after the context
    /// is gone.
    var loader: (any RelationshipLoader)? { link?.loader }
    /// How the property reaches its context: the context's one link, held strongly, which holds the context weakly.
    /// A context registers thousands of objects per fetch, and a strong reference to a shared link costs one
    /// reference count where a weak reference of each property's own to the context would cost a weak count.
    var link: LoaderLink?
    /// The IDs, kept without an array when there is at most one: a to-one's ID costs no allocation.
    private var stored: StoredIDs
    /// The IDs as the object's stored record holds them, for a side that stores them: set when the object is read or
    /// saved, so that a save finds a changed relationship by comparing them with ``ids``, and a rollback restores
    /// them.
    private var saved: StoredIDs
    /// Whether ``ids`` were set since they were last saved: when not, they are the saved ones, without comparing.
    private var idsMayDiffer = false

    init(ids: [UUID], objects: [AnyObject]?) {
        // From a local: reading `stored` back would cost a run-time exclusivity check.
        let stored = StoredIDs(ids)
        self.stored = stored
        self.saved = stored
        self.objects = objects
    }

    /// A state holding the one ID `id`, as a record stores a to-one.
    init(id: UUID, objects: [AnyObject]?) {
        self.stored = .one(id)
        self.saved = .one(id)
        self.objects = objects
    }

    /// The IDs of a relationship: none, one, or several in an array.
    private enum StoredIDs: Equatable {
        case none
        case one(UUID)
        case many([UUID])

        init(_ ids: [UUID]) {
            switch ids.count {
            case 0: self = .none
            case 1: self = .one(ids[0])
            default: self = .many(ids)
            }
        }

        var ids: [UUID] {
            switch self {
            case .none: []
            case .one(let id): [id]
            case .many(let ids): ids
            }
        }

        var first: UUID? {
            switch self {
            case .none: nil
            case .one(let id): id
            case .many(let ids): ids.first
            }
        }
    }

    /// Whether ``ids`` differ from the stored ones.
    var idsChanged: Bool { idsMayDiffer && stored != saved }

    /// Notes that the object's stored record holds ``ids``.
    func markSaved() {
        saved = stored
        idsMayDiffer = false
    }

    /// Gives the property the stored IDs again, its related objects to be loaded anew.
    func restoreSaved() {
        stored = saved
        idsMayDiffer = false
        objects = nil
        generation = 0
    }

    /// The related object of a to-one side: the one assigned or loaded, or the one the context has for the ID.
    func toOne<Target: PersistentModel>(_: Target.Type) -> Target? {
        if let object = objects?.first as? Target {
            return loader?.isDeletedHere(object) == true ? nil : object
        }
        guard let id = firstID, let loader, let object = loader.loadObject(Target.self, id: id) else { return nil }
        objects = [object]
        return object
    }

    /// The related objects of a many-to-many side, in the order of their IDs.
    func manyToMany<Target: PersistentModel>(_: Target.Type) -> [Target] {
        if let objects, objects.count == ids.count {
            let related = objects.compactMap { $0 as? Target }
            guard let loader else { return related }
            return related.filter { !loader.isDeletedHere($0) }
        }
        guard let loader else { return [] }
        let related = loader.loadObjects(Target.self, ids: ids)
        if related.count == ids.count { objects = related }
        return related
    }

    /// Sets the stored side to `related`.
    func assign(_ related: [AnyObject], ids: [UUID]) {
        self.ids = ids
        self.objects = related
    }
}

/// What a relationship property holds in its object: its shared state once one is needed, and until then what the
/// state would be made from.
///
/// A decoded to-one holds its record's ID here and a context's object holds the context's link here, so that reading
/// a thousand records makes no state for each (an allocation per object and property); the state is made from them
/// when the property is first read or set (``state()``), and from then on it alone holds the IDs and the link.
///
/// ``ToOne``, ``ToMany`` and ``ManyToMany`` each have this as their one stored property, so that code that reaches a
/// property by its offset in an object (``ObjectContents``) finds the same layout for all three.
struct RelationshipStorage {
    /// The shared state, once made; when it is, ``link`` and ``storedID`` are `nil`.
    var related: RelatedObjects?
    /// The link to the context that holds the object, while there is no state.
    var link: LoaderLink?
    /// The one ID a record stores for a to-one, while there is no state.
    var storedID: UUID?

    /// A property that relates to nothing and belongs to no context.
    init() {}

    /// A property whose state is `related`.
    init(related: RelatedObjects?) {
        self.related = related
    }

    /// A to-one read from a record that holds `id`: no state until the property is used.
    init(storedID: UUID?) {
        self.storedID = storedID
    }

    /// The state, made from the stored ID and link (and kept) when there is none yet.
    mutating func state() -> RelatedObjects {
        if let related { return related }
        let made: RelatedObjects
        if let storedID {
            made = RelatedObjects(id: storedID, objects: nil)
        } else {
            made = RelatedObjects(ids: [], objects: nil)
        }
        made.link = link
        related = made
        link = nil
        storedID = nil
        return made
    }

    /// The state when the property has one or a stored ID to make it from; `nil` when it relates to nothing, where
    /// reading a to-one or many-to-many makes nothing.
    mutating func stateIfRelated() -> RelatedObjects? {
        if let related { return related }
        guard storedID != nil else { return nil }
        return state()
    }

    /// The state when the property has one or something to make it from: a stored ID, or the context's link, through
    /// which a derived list is read; `nil` outside a context when it lists nothing.
    mutating func stateIfLinked() -> RelatedObjects? {
        if let related { return related }
        guard storedID != nil || link != nil else { return nil }
        return state()
    }

    /// The first ID the property holds (a to-one's ID), read without making a state or an array.
    var firstID: UUID? {
        if let related { return related.firstID }
        return storedID
    }

    /// Where ``related``, ``link`` and ``storedID`` lie in the storage, for code that reads them in place: in the order
    /// of their declarations, as Swift lays out a struct of its own module (constants, since a stored `static let`
    /// costs a `swift_once` check at each use; a test compares them with `MemoryLayout.offset(of:)`).
    static var relatedOffset: Int { 0 }
    static var linkOffset: Int { 8 }
    static var storedIDOffset: Int { 16 }
}

/// The one reference of a context's relationship properties to it, which does not keep it alive.
final class LoaderLink {
    /// The context, while it exists.
    weak var loader: (any RelationshipLoader)?

    init(_ loader: any RelationshipLoader) {
        self.loader = loader
    }
}

/// The wrappers of relationship properties, which the container finds among a model class's stored properties to check
/// that its entity declares each of them.
protocol RelationshipPropertyWrapper {}

extension ToOne: RelationshipPropertyWrapper {}
extension ToMany: RelationshipPropertyWrapper {}
extension ManyToMany: RelationshipPropertyWrapper {}

/// A to-one relationship property of a ``PersistentModel``: SwiftData's `var project: Project?`.
///
/// ```swift
/// @ToOne var project: Project?
///
/// static let entity = Entity<Task>(relationships: [.toOne("project", \.project, inverse: "tasks")])
/// ```
///
/// The record stores the related model's ID under the property's name, indexed; reading the property loads the
/// related object through the object's context (once), and setting it updates the inverse side's loaded list.
/// `$project.id` is the ID without loading anything. Declare every relationship property in the entity.
@propertyWrapper
public struct ToOne<Target: PersistentModel> {
    /// The property's state, or what it is made from: a model initializer's implicit `nil` and a decoded ID allocate
    /// nothing.
    var storage: RelationshipStorage

    /// A relationship to `wrappedValue`, or to nothing.
    public init(wrappedValue: Target? = nil) {
        // Unwrapped rather than mapped: `Optional.map` here, unspecialized, looks up type metadata on every call, and
        // every decoded object's initializer starts its property with `nil`.
        guard let wrappedValue else {
            storage = RelationshipStorage()
            return
        }
        storage = RelationshipStorage(related: RelatedObjects(id: wrappedValue.id, objects: [wrappedValue]))
    }

    /// A relationship to the model with `id`, as a record stores it: the state is made when the property is used.
    init(storedID id: UUID?) {
        storage = RelationshipStorage(storedID: id)
    }

    /// The related object, for a property outside a class; relationship properties belong to ``PersistentModel``
    /// classes, whose accesses go through ``subscript(_enclosingInstance:wrapped:storage:)``.
    @available(*, unavailable, message: "ToOne is for properties of PersistentModel classes")
    public var wrappedValue: Target? {
        get { storage.related?.toOne(Target.self) }
        set { storage.state().assign(newValue.map { [$0] } ?? [], ids: newValue.map { [$0.id] } ?? []) }
    }

    /// The related object of `owner`: read through its context, and set with the inverse side kept in step.
    public static subscript<Owner: PersistentModel>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Target?>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Self>
    ) -> Target? {
        get { owner[keyPath: storageKeyPath].storage.stateIfRelated()?.toOne(Target.self) }
        set {
            RelationshipUpdate.setToOne(newValue, of: owner, related: owner[keyPath: storageKeyPath].storage.state())
        }
    }

    /// The property itself, for its ``id``, read without loading the related object (`task.$project.id`).
    public var projectedValue: Self { self }

    /// The related model's ID, read without loading it; `nil` when there is no related model.
    public var id: UUID? { storage.firstID }
}

/// A to-many relationship property of a ``PersistentModel`` derived from the other side: SwiftData's
/// `@Relationship(inverse: \Task.project) var tasks: [Task]`.
///
/// ```swift
/// @ToMany var tasks: [Task]
///
/// static let entity = Entity<Project>(relationships: [
///     .toMany("tasks", \.tasks, inverse: "project", deleteRule: .cascade)
/// ])
/// ```
///
/// The record stores nothing for it: the list is the models whose ``ToOne`` (or ``ManyToMany``) property holds this
/// model, read through the index on that field, with the context's unsaved changes. Appending a model sets its
/// inverse property to this one; removing one clears it.
@propertyWrapper
public struct ToMany<Target: PersistentModel> {
    /// The property's state, or what it is made from (see ``ToOne``).
    var storage: RelationshipStorage

    /// A list of `wrappedValue`, whose inverse properties are set when the owner is inserted into a context.
    public init(wrappedValue: [Target] = []) {
        storage = RelationshipStorage(
            related: wrappedValue.isEmpty ? nil : RelatedObjects(ids: [], objects: wrappedValue))
    }

    /// The related objects, for a property outside a class; see ``ToOne/wrappedValue``.
    @available(*, unavailable, message: "ToMany is for properties of PersistentModel classes")
    public var wrappedValue: [Target] {
        get { storage.related?.objects?.compactMap { $0 as? Target } ?? [] }
        set { storage.state().objects = newValue }
    }

    /// The related objects of `owner`: read through its context, and set with each object's inverse property kept
    /// in step.
    public static subscript<Owner: PersistentModel>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, [Target]>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Self>
    ) -> [Target] {
        get {
            guard let related = owner[keyPath: storageKeyPath].storage.stateIfLinked() else { return [] }
            return RelationshipUpdate.derived(Target.self, of: owner, related: related)
        }
        set {
            RelationshipUpdate.setDerived(newValue, of: owner, related: owner[keyPath: storageKeyPath].storage.state())
        }
    }

    /// The property itself, for the entity's declaration (`\.$tasks`).
    public var projectedValue: Self { self }
}

/// The stored side of a many-to-many relationship property of a ``PersistentModel``: SwiftData's
/// `@Relationship(inverse: \Tag.tasks) var tags: [Tag]`.
///
/// ```swift
/// @ManyToMany var tags: [Tag]
///
/// static let entity = Entity<Task>(relationships: [.manyToMany("tags", \.tags, inverse: "tasks")])
/// ```
///
/// The record stores the related models' IDs under the property's name, with a multi-entry index; the other side
/// is a ``ToMany`` derived from it.
@propertyWrapper
public struct ManyToMany<Target: PersistentModel> {
    /// The property's state, or what it is made from (see ``ToOne``).
    var storage: RelationshipStorage

    /// A relationship to `wrappedValue`.
    public init(wrappedValue: [Target] = []) {
        storage = RelationshipStorage(
            related: wrappedValue.isEmpty ? nil : RelatedObjects(ids: wrappedValue.map(\.id), objects: wrappedValue))
    }

    /// A relationship to the models with `ids`, as a record stores it.
    init(storedIDs ids: [UUID]) {
        storage = RelationshipStorage(related: ids.isEmpty ? nil : RelatedObjects(ids: ids, objects: nil))
    }

    /// The related objects, for a property outside a class; see ``ToOne/wrappedValue``.
    @available(*, unavailable, message: "ManyToMany is for properties of PersistentModel classes")
    public var wrappedValue: [Target] {
        get { storage.related?.manyToMany(Target.self) ?? [] }
        set { storage.state().assign(newValue, ids: newValue.map(\.id)) }
    }

    /// The related objects of `owner`: read through its context, and set with the inverse side's loaded lists kept
    /// in step.
    public static subscript<Owner: PersistentModel>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, [Target]>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Self>
    ) -> [Target] {
        get { owner[keyPath: storageKeyPath].storage.stateIfRelated()?.manyToMany(Target.self) ?? [] }
        set {
            RelationshipUpdate.setManyToMany(
                newValue, of: owner, related: owner[keyPath: storageKeyPath].storage.state())
        }
    }

    /// The property itself, for its ``ids``, read without loading the related objects (`task.$tags.ids`).
    public var projectedValue: Self { self }

    /// The related models' IDs, read without loading them.
    public var ids: [UUID] { storage.related?.ids ?? [] }
}

// MARK: - Coding

// Synthesized `Codable` calls `encode(_:forKey:)` and `decode(_:forKey:)` with the property's wrapper; these
// overloads, more specific than the generic ones, store a to-one as an optional ID (absent for `nil`, as a struct's
// `UUID?` field), a many-to-many as its IDs, and a derived to-many as nothing at all.

extension ToOne: Codable {
    /// Reads the related model's ID.
    ///
    /// - Throws: `DecodingError` when the value is not a UUID or null.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(storedID: container.decodeNil() ? nil : try container.decode(UUID.self))
    }

    /// Writes the related model's ID, or null.
    ///
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let id { try container.encode(id) } else { try container.encodeNil() }
    }
}

extension ToMany: Codable {
    /// A list to be read from the other side: nothing is stored.
    public init(from decoder: any Decoder) {
        self.init()
    }

    /// Writes nothing: the list is derived from the other side.
    public func encode(to encoder: any Encoder) {}
}

extension ManyToMany: Codable {
    /// Reads the related models' IDs.
    ///
    /// - Throws: `DecodingError` when the value is not an array of UUIDs.
    public init(from decoder: any Decoder) throws {
        self.init(storedIDs: try [UUID](from: decoder))
    }

    /// Writes the related models' IDs.
    ///
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        try ids.encode(to: encoder)
    }
}

extension KeyedEncodingContainer {
    /// Writes a to-one relationship property as its related model's ID, leaving the key out when there is none.
    ///
    /// - Throws: What the encoder throws.
    public mutating func encode<Target>(_ value: ToOne<Target>, forKey key: Key) throws {
        try encodeIfPresent(value.id, forKey: key)
    }

    /// Writes nothing for a derived to-many relationship property.
    public mutating func encode<Target>(_ value: ToMany<Target>, forKey key: Key) {}
}

extension KeyedDecodingContainer {
    /// Reads a to-one relationship property: the related model's ID, `nil` when the key is absent.
    ///
    /// - Throws: `DecodingError` when the value is not a UUID.
    public func decode<Target>(_ type: ToOne<Target>.Type, forKey key: Key) throws -> ToOne<Target> {
        ToOne(storedID: try decodeIfPresent(UUID.self, forKey: key))
    }

    /// Reads a derived to-many relationship property, which stores nothing.
    public func decode<Target>(_ type: ToMany<Target>.Type, forKey key: Key) -> ToMany<Target> {
        ToMany()
    }

    /// Reads the stored side of a many-to-many relationship property: no IDs when the key is absent.
    ///
    /// - Throws: `DecodingError` when the value is not an array of UUIDs.
    public func decode<Target>(_ type: ManyToMany<Target>.Type, forKey key: Key) throws -> ManyToMany<Target> {
        ManyToMany(storedIDs: try decodeIfPresent([UUID].self, forKey: key) ?? [])
    }
}

// `FieldCodable` reference models read and write relationship properties as records store them, without going
// through `Codable`.

extension FieldReader {
    /// Reads a to-one relationship property: the related model's ID, `nil` when the key is absent or null.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is not a UUID; see ``FieldReader`` for the rest.
    public func decode<Target>(_ type: ToOne<Target>.Type, forKey key: String) throws -> ToOne<Target> {
        ToOne(storedID: try decodeIfPresent(UUID.self, forKey: key))
    }

    /// Reads a derived to-many relationship property, which stores nothing.
    public func decode<Target>(_ type: ToMany<Target>.Type, forKey key: String) -> ToMany<Target> {
        ToMany()
    }

    /// Reads the stored side of a many-to-many relationship property: no IDs when the key is absent or null.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is not an array of UUIDs; see ``FieldReader`` for the
    ///   rest.
    public func decode<Target>(_ type: ManyToMany<Target>.Type, forKey key: String) throws -> ManyToMany<Target> {
        ManyToMany(storedIDs: try decodeIfPresent([UUID].self, forKey: key) ?? [])
    }
}

extension FieldWriter {
    /// Writes a to-one relationship property as its related model's ID, leaving the key out when there is none.
    ///
    /// - Throws: What writing a UUID throws; see ``FieldWriter``.
    public func encode<Target>(_ value: ToOne<Target>, forKey key: String) throws {
        try encodeIfPresent(value.id, forKey: key)
    }

    /// Writes nothing for a derived to-many relationship property.
    public func encode<Target>(_ value: ToMany<Target>, forKey key: String) {}

    /// Writes a many-to-many relationship property as its related models' IDs.
    ///
    /// - Throws: What writing an array throws; see ``FieldWriter``.
    public func encode<Target>(_ value: ManyToMany<Target>, forKey key: String) throws {
        try encode(value.ids, forKey: key)
    }
}
