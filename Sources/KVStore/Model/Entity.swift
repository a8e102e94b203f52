import Foundation

/// How the store keeps one model type: the entity's name, its indexes and its unique constraints.
///
/// Declare it as the model's static `entity`, with key paths:
///
/// ```swift
/// struct User: Model {
///     var id = UUID.timeOrdered()
///     var email: String
///     var firstName: String
///     var lastName: String
///     var teamID: UUID?
///
///     static let entity = Entity<User>(indexes: [
///         .unique(\.email),
///         .unique(\.lastName, \.firstName),
///         .index(\.teamID),
///     ])
/// }
/// ```
///
/// Indexes make equality and range predicates, `contains` on arrays, and sorts with a limit read only the records
/// they need. A unique index also refuses a save that would give two records the same value.
public struct Entity<M: StoredModel>: Sendable {
    /// The entity's name in the store. It defaults to the type's name; keep it when renaming the type.
    public var name: String

    /// The indexes and unique constraints, including the indexes of stored relationships.
    public var indexes: [ModelIndex<M>]

    /// The relationships to other models.
    public var relationships: [Relationship<M>]

    /// The entity's name in the previous schema version, when a migration renames it: a lightweight
    /// ``MigrationStage`` moves the records of `originalName` to this entity.
    public var originalName: String?

    /// Fields renamed since the previous schema version, new name to old name: a lightweight ``MigrationStage``
    /// renames them in the catalog, and the stored records read under the new names without being rewritten.
    ///
    /// As with SwiftData's `@Attribute(originalName:)`, a rename applies to the model's own stored property: a field
    /// of the old name in a nested struct or enum payload keeps its name. Fields of nested values cannot be renamed
    /// this way.
    public var renamedFields: [String: String]

    /// The attributes whose values are kept apart from the record, in chunks.
    public var externalStorage: [ExternalAttribute<M>]

    /// The names of indexes and unique constraints to remove from the store.
    ///
    /// An index the model stops declaring stays in the store, and every writer keeps maintaining it, so that a
    /// program that declares fewer indexes (a script, an older version) never erases another program's. Name it
    /// here to remove it: the container that opens with this entity deletes it and records the removal in the
    /// catalog; writers of other programs stop maintaining it at their next write, and a program that still declares
    /// it is refused with ``KVStoreError/schemaChanged``. A removed name cannot be declared again: give a new index
    /// another name.
    public var removedIndexes: [String]

    /// The fields whose values a deleted model keeps in the store's change history (SwiftData's
    /// `preserveValueOnDeletion`): its ``HistoryTombstone`` holds them, so that a consumer of the history can still
    /// tell what was deleted. The catalog records them, and every writer of the store keeps the fields any program
    /// declared; they only matter once the store records history (``ModelContainer/enableHistory(retention:)``).
    public var preservedOnDeletion: [String]

    /// Whether a fetch or count that scans, or whose index read does not answer its predicate exactly, may test the
    /// records' stored fields instead of decoding every model and evaluating the predicate on it (`true` by default).
    ///
    /// A predicate made of comparisons between attributes and constants, `&&`, `||` and `!` is tested on the field
    /// each attribute is stored in, and only the records it matches are decoded. That relies on what the store's
    /// other readers of fields rely on (indexes rebuilt from records, aggregates, `kvtool`): a top-level stored
    /// property is kept under its own name and decodes as it is stored, as synthesized `Codable` and a
    /// ``FieldCodable`` conformance that reads each field into its property do. The scan checks it on its first
    /// records and on every match (an index read, on every candidate), and decodes every record and evaluates the
    /// predicate once a record's fields disagree with its model.
    ///
    /// Set it to `false` for a model whose decoding changes what it reads (custom `CodingKeys` that give a property
    /// another property's name, an `init(from:)` that normalizes a value): its scans then decode every model and
    /// evaluate the predicate on it.
    public var testsStoredFields = true

    /// Creates an entity description.
    ///
    /// A relationship stored in a field of this model gets an index on that field unless one is declared. An index or
    /// unique constraint on `id` alone is left out: the record key is one already, which fetches by `id` use.
    ///
    /// - Parameters:
    ///   - name: The entity's name in the store, or `nil` for the type's name.
    ///   - indexes: Indexes and unique constraints, built from key paths.
    ///   - relationships: Relationships to other models, with their delete rules.
    ///   - originalName: The entity's name in the previous schema version, when a migration renames it.
    ///   - renamedFields: Fields renamed since the previous schema version, new name to old name.
    ///   - externalStorage: The ``ExternalData`` attributes whose bytes are kept apart from the record.
    ///   - removedIndexes: Names of indexes and unique constraints to remove from the store.
    ///   - preservedOnDeletion: The attributes whose values a deleted model's history tombstone keeps.
    public init(
        name: String? = nil,
        indexes: [ModelIndex<M>] = [],
        relationships: [Relationship<M>] = [],
        originalName: String? = nil,
        renamedFields: [String: String] = [:],
        externalStorage: [ExternalAttribute<M>] = [],
        removedIndexes: [String] = [],
        preservedOnDeletion: [PartialKeyPath<M> & Sendable] = []
    ) {
        self.preservedOnDeletion = preservedOnDeletion.map { ModelIndex<M>.fieldName(of: $0) }
        self.name = name ?? String(describing: M.self)
        self.originalName = originalName
        self.renamedFields = renamedFields
        var indexes = indexes
        for relationship in relationships {
            guard case .field(let field, _, let index, _, _) = relationship.storage else { continue }
            if !indexes.contains(where: { $0.fields == [field] }) { indexes.append(index) }
        }
        // The record key is already a unique index on `id`: SwiftData's `@Attribute(.unique) var id` ports as it is.
        self.indexes = indexes.filter { $0.fields != ["id"] }
        self.relationships = relationships
        self.externalStorage = externalStorage
        self.removedIndexes = removedIndexes
    }
}

/// An attribute of type ``ExternalData`` or `ExternalData?` whose bytes are kept apart from the record, in chunks.
public struct ExternalAttribute<M: StoredModel>: Sendable {
    /// The attribute's field name: its coding key.
    public let name: String

    /// The attribute's key path, as the reading and streaming methods are given it.
    let keyPath: AnyKeyPath & Sendable
    /// Whether the attribute is optional, so that it may hold no value.
    let isOptional: Bool
    /// Reads the attribute's value; `nil` when an optional attribute holds none.
    let get: @Sendable (M) -> ExternalData?
    /// Sets the attribute's value; `nil` leaves a non-optional attribute as it is.
    let set: @Sendable (inout M, ExternalData?) -> Void

    /// Declares `keyPath` external.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, of type ``ExternalData``.
    ///   - name: The field's coding key, when it differs from the property's name.
    public static func attribute(_ keyPath: WritableKeyPath<M, ExternalData> & Sendable, name: String? = nil) -> Self {
        ExternalAttribute(
            name: name ?? ModelIndex<M>.fieldName(of: keyPath), keyPath: keyPath, isOptional: false,
            get: { $0[keyPath: keyPath] },
            set: { model, value in if let value { model[keyPath: keyPath] = value } })
    }

    /// Declares the optional attribute `keyPath` external: `nil` stores nothing, and saving a model whose stored value
    /// was set to `nil` deletes its chunks.
    ///
    /// ```swift
    /// var photo: ExternalData?
    /// static let entity = Entity<Item>(externalStorage: [.attribute(\.photo)])
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, of type `ExternalData?`.
    ///   - name: The field's coding key, when it differs from the property's name.
    public static func attribute(_ keyPath: WritableKeyPath<M, ExternalData?> & Sendable, name: String? = nil) -> Self {
        ExternalAttribute(
            name: name ?? ModelIndex<M>.fieldName(of: keyPath), keyPath: keyPath, isOptional: true,
            get: { $0[keyPath: keyPath] }, set: { model, value in model[keyPath: keyPath] = value })
    }
}

/// Appends the index keys of the model at an address to a set, as the keys of the index at a position.
typealias IndexKeyAppender = @Sendable (ModelAddress, Int, inout IndexKeySet) -> Void

/// An index or unique constraint on one or more attributes of a model.
///
/// Make one with ``index(_:name:)-(KeyPath<M,V>Sendable,_)``, ``unique(_:name:onConflict:)`` or their compound forms. The index's
/// attributes are named after the key paths' properties, which must be the fields' coding keys; pass `name` when
/// they differ.
public struct ModelIndex<M: StoredModel>: Sendable {
    /// The index's name: its field, or its fields joined with `+`.
    public let name: String

    /// The names of the indexed fields, in key order.
    public let fields: [String]

    /// Whether at most one model may have each value.
    public let isUnique: Bool

    /// What saving a new model with a value another model holds does, for a unique constraint: refuse it (`.fail`),
    /// or merge it into the stored model (`.update`, SwiftData's upsert). Always `.fail` for an index that is not
    /// unique.
    public let onConflict: UniqueConflictPolicy

    /// Whether the indexed field is an array with one index entry per element.
    public let isMultiEntry: Bool

    /// Whether the keys are the standard encoding of the stored fields' values, which programs that do not declare
    /// the index can compute from the records (see ``RecordIndexKeys``).
    let isDerivable: Bool

    /// Whether the models under a key of this single-attribute index are exactly those whose attribute `==` the
    /// value the key encodes (``hasExactEqualityKey(_:)``), so that an equality answered by the index needs no model
    /// read to be counted or listed.
    var hasExactEquality = false

    /// Whether the models in a range of keys of this single-attribute index are exactly those whose attribute lies in
    /// the range of values (``hasExactOrderKey(_:)``), so that a comparison answered by the index needs no model
    /// read to be counted or listed.
    var hasExactOrder = false

    /// Whether the models in a range of keys of this single-attribute index with an upper bound are exactly those
    /// whose attribute lies in the range of values (``hasExactOrderBelowNaNKey(_:)``): floating-point numbers and
    /// dates, whose NaN key sorts after every other.
    var hasExactOrderBelowNaN = false

    /// For a compound index, the traits of each attribute's key components, in key order
    /// (``QueryPlanner/isExactCompound(_:on:shape:terms:)``); empty for the others.
    var componentTraits: [KeyComponentTraits] = []

    let keyPaths: [PartialKeyPath<M> & Sendable]

    /// Appends the index keys of the model at the given address to a set, as the keys of the index at the given
    /// position, finalized (long keys cut to a prefix plus a hash).
    ///
    /// The model is passed by address, so that an entity's key functions are all of one type that does not depend
    /// on `M`, which code generic over the model iterates without looking up type metadata.
    let appendKeys: IndexKeyAppender

    /// The index keys of a model, finalized, with the whole key of each.
    func keys(_ model: M, longKeyHash: LongKeyHash) -> [(key: [UInt8], whole: [UInt8])] {
        var set = IndexKeySet(longKeyHash: longKeyHash)
        withAddress(of: model) { appendKeys($0, 0, &set) }
        return set.keys(of: 0).map { key in (key, key.withBorrowedBytes { set.wholeKey(of: $0, index: 0) }) }
    }

    /// One encoder per attribute, for the query planner: a boxed value to its key component.
    let componentEncoders: [KeyComponentEncoder]

    /// An index on one attribute.
    ///
    /// - Parameters:
    ///   - keyPath: The indexed attribute; `Optional` attributes index `nil` too, before every value.
    ///   - name: The field's coding key, when it differs from the property's name; the index's name, which must be
    ///     given, for a computed property (`var nameFolded: String { name.lowercased() }`), whose keys only a program
    ///     declaring the index can compute.
    public static func index<V: IndexKeyEncodable>(_ keyPath: KeyPath<M, V> & Sendable, name: String? = nil) -> Self {
        single(keyPath, name: name, unique: false)
    }

    /// A unique constraint on one attribute: saving a second model with the same value throws
    /// ``KVStoreError/uniqueViolation`` and writes nothing of that save, or, with `onConflict: .update`, updates the
    /// stored model with the new one's values, as SwiftData's `@Attribute(.unique)` does.
    ///
    /// ```swift
    /// static let entity = Entity<Contact>(indexes: [.unique(\.email, onConflict: .update)])
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The attribute whose values must be unique.
    ///   - name: The field's coding key, when it differs from the property's name; the index's name, which must be
    ///     given, for a computed property, whose keys only a program declaring the index can compute.
    ///   - onConflict: What saving a new model with a value another model holds does (``UniqueConflictPolicy``).
    public static func unique<V: IndexKeyEncodable>(
        _ keyPath: KeyPath<M, V> & Sendable, name: String? = nil, onConflict: UniqueConflictPolicy = .fail
    ) -> Self {
        single(keyPath, name: name, unique: true, onConflict: onConflict)
    }

    /// A multi-entry index on an array attribute, with one entry per element, for `$0.tags.contains(tag)` and for
    /// many-to-many relationships.
    ///
    /// - Parameters:
    ///   - keyPath: The array attribute.
    ///   - name: The field's coding key, when it differs from the property's name; the index's name, which must be
    ///     given, for a computed property (`var nameFolded: String { name.lowercased() }`), whose keys only a program
    ///     declaring the index can compute.
    public static func index<V: IndexKeyEncodable>(_ keyPath: KeyPath<M, [V]> & Sendable, name: String? = nil) -> Self {
        let field = name ?? fieldName(of: keyPath)
        let read = reader(keyPath)
        var index = ModelIndex(
            name: field, fields: [field], isUnique: false, onConflict: .fail, isMultiEntry: true,
            isDerivable: hasStandardIndexKey(V.self) && !isComputed(keyPath), keyPaths: [keyPath],
            appendKeys: { model, position, set in
                let elements = read(model)
                // A few elements are compared with the keys before them; many are deduplicated through a set.
                guard elements.count > 16 else {
                    for element in elements {
                        set.append(index: position, unique: true) { element.appendIndexKey(to: &$0) }
                    }
                    return
                }
                var seen = Set<[UInt8]>()
                for element in elements {
                    var key: [UInt8] = []
                    element.appendIndexKey(to: &key)
                    if seen.insert(key).inserted { set.append(index: position) { $0.append(contentsOf: key) } }
                }
            },
            componentEncoders: [KeyComponentEncoder(encoder(V.self))])
        // One entry per distinct element: the models under a key are those whose array contains the element.
        index.hasExactEquality = hasExactEqualityKey(V.self)
        return index
    }

    /// A compound index on two or more attributes, its key their values in order: usable for equalities on a
    /// prefix of them (`$0.lastName == last`), with a range or prefix on the next one
    /// (`$0.lastName == last && $0.age >= 18`), and for sorts on the attributes after the equalities.
    ///
    /// ```swift
    /// static let entity = Entity<Person>(indexes: [.index(\.lastName, \.firstName, \.age)])
    /// ```
    ///
    /// - Parameters:
    ///   - first: The first attribute, the key's most significant part.
    ///   - second: The second attribute.
    ///   - rest: Further attributes, in key order.
    public static func index<V1: IndexKeyEncodable, V2: IndexKeyEncodable, each V: IndexKeyEncodable>(
        _ first: KeyPath<M, V1> & Sendable,
        _ second: KeyPath<M, V2> & Sendable,
        _ rest: repeat KeyPath<M, each V> & Sendable
    ) -> Self {
        var components = [Component(first), Component(second)]
        for keyPath in repeat each rest { components.append(Component(keyPath)) }
        return compound(components, unique: false)
    }

    /// A unique constraint on the combination of two or more attributes, such as a last and a first name; usable by
    /// queries as ``index(_:_:_:)`` is.
    ///
    /// - Parameters:
    ///   - first: The first attribute, the key's most significant part.
    ///   - second: The second attribute.
    ///   - rest: Further attributes, in key order.
    ///   - onConflict: What saving a new model with a combination another model holds does
    ///     (``UniqueConflictPolicy``).
    public static func unique<V1: IndexKeyEncodable, V2: IndexKeyEncodable, each V: IndexKeyEncodable>(
        _ first: KeyPath<M, V1> & Sendable,
        _ second: KeyPath<M, V2> & Sendable,
        _ rest: repeat KeyPath<M, each V> & Sendable,
        onConflict: UniqueConflictPolicy = .fail
    ) -> Self {
        var components = [Component(first), Component(second)]
        for keyPath in repeat each rest { components.append(Component(keyPath)) }
        return compound(components, unique: true, onConflict: onConflict)
    }

    /// One attribute of a compound index, its type erased.
    private struct Component {
        let keyPath: PartialKeyPath<M> & Sendable
        let field: String
        /// Appends the attribute's key component of the model at an address.
        let append: @Sendable (ModelAddress, inout [UInt8]) -> Void
        let encoder: @Sendable (Any) -> [UInt8]?
        let isDerivable: Bool
        let traits: KeyComponentTraits

        init<V: IndexKeyEncodable>(_ keyPath: KeyPath<M, V> & Sendable) {
            let read = ModelIndex.reader(keyPath)
            self.keyPath = keyPath
            field = ModelIndex.fieldName(of: keyPath)
            append = { model, key in read(model).appendIndexKey(to: &key) }
            encoder = ModelIndex.encoder(V.self)
            isDerivable = hasStandardIndexKey(V.self) && !ModelIndex.isComputed(keyPath)
            traits = KeyComponentTraits(V.self)
        }
    }

    private static func single<V: IndexKeyEncodable>(
        _ keyPath: KeyPath<M, V> & Sendable,
        name: String?,
        unique: Bool,
        onConflict: UniqueConflictPolicy = .fail
    ) -> Self {
        let field = name ?? fieldName(of: keyPath)
        let read = reader(keyPath)
        var index = ModelIndex(
            name: field, fields: [field], isUnique: unique, onConflict: onConflict, isMultiEntry: false,
            isDerivable: hasStandardIndexKey(V.self) && !isComputed(keyPath), keyPaths: [keyPath],
            appendKeys: { model, position, set in set.append(index: position) { read(model).appendIndexKey(to: &$0) } },
            componentEncoders: [KeyComponentEncoder(encoder(V.self))])
        index.hasExactEquality = hasExactEqualityKey(V.self)
        index.hasExactOrder = hasExactOrderKey(V.self)
        index.hasExactOrderBelowNaN = hasExactOrderBelowNaNKey(V.self)
        return index
    }

    /// The index of a relationship property's stored IDs: one entry for a to-one's ID (`nil` included, as for a
    /// `UUID?` field), one per ID for a many-to-many, named after the field that stores them.
    ///
    /// A to-one's index is planned for predicates on `keyPath`, its property, compared with an ID or `nil`
    /// (`$0.project?.id == id`, `$0.project == nil`).
    ///
    /// - Parameter stateOffset: For a class, the offset in its instances of the relationship property's state, from
    ///   which a to-one's ID is read in place (``ModelAddress/firstRelatedID(of:stateOffset:)``) rather than through
    ///   `readFirst`, which would copy the model's reference and call through two generic thunks per key.
    static func references(
        _ field: String, isToMany: Bool, plannedAs keyPath: (PartialKeyPath<M> & Sendable)?,
        read: @escaping @Sendable (M) -> [UUID], readFirst: @escaping @Sendable (M) -> UUID?, stateOffset: Int? = nil
    ) -> Self {
        let ids = ModelAddress.reader(read)
        let firstID: @Sendable (ModelAddress) -> UUID?
        if let stateOffset {
            firstID = ModelAddress.firstRelatedID(of: M.self, stateOffset: stateOffset)
        } else {
            firstID = ModelAddress.reader(readFirst)
        }
        var keyPaths: [PartialKeyPath<M> & Sendable] = []
        if let keyPath { keyPaths.append(keyPath) }
        let componentEncoder: @Sendable (Any) -> [UInt8]?
        if isToMany {
            componentEncoder = encoder(UUID.self)
        } else {
            componentEncoder = { value in referenceKey(value) }
        }
        var index = ModelIndex(
            name: field, fields: [field], isUnique: false, onConflict: .fail, isMultiEntry: isToMany,
            isDerivable: true, keyPaths: keyPaths,
            appendKeys: { model, position, set in
                guard isToMany else {
                    // A to-one's ID, read without making an array.
                    let related = firstID(model)
                    set.append(index: position) { related.appendIndexKey(to: &$0) }
                    return
                }
                var seen = Set<UUID>()
                for id in ids(model) where seen.insert(id).inserted {
                    set.append(index: position) { id.appendIndexKey(to: &$0) }
                }
            },
            componentEncoders: [KeyComponentEncoder(componentEncoder)])
        // A struct's predicate compares the stored IDs themselves; a class's reads the related object, which may be
        // gone (a dangling ID reads `nil`), so only the predicate can say.
        index.hasExactEquality = !(M.self is AnyClass)
        return index
    }

    /// The key component of a to-one's value in a predicate: an ID, an optional ID, a model (its ID) or `nil`.
    private static func referenceKey(_ value: Any) -> [UInt8]? {
        let id: UUID?
        switch value {
        case let value as UUID: id = value
        case let value as UUID?: id = value
        case let model as any StoredModel: id = model.id
        case let optional as any AnyOptional where optional.isNil: id = nil
        case let optional as any AnyOptional:
            guard let model = optional.wrappedValue as? any StoredModel else { return nil }
            id = model.id
        default: return nil
        }
        var key: [UInt8] = []
        id.appendIndexKey(to: &key)
        return key
    }

    private static func compound(
        _ components: [Component], unique: Bool, onConflict: UniqueConflictPolicy = .fail
    ) -> Self {
        let fields = components.map(\.field)
        let appenders = components.map(\.append)
        var index = ModelIndex(
            name: fields.joined(separator: "+"), fields: fields, isUnique: unique, onConflict: onConflict,
            isMultiEntry: false, isDerivable: components.allSatisfy(\.isDerivable), keyPaths: components.map(\.keyPath),
            appendKeys: { model, position, set in
                set.append(index: position) { key in
                    for append in appenders { append(model, &key) }
                }
            },
            componentEncoders: components.map { KeyComponentEncoder($0.encoder) })
        index.componentTraits = components.map(\.traits)
        return index
    }

    /// Reads the attribute at `keyPath` of the model at an address: at its offset when it is a stored property of the
    /// model (of a struct, or the instance of a class), through the key path otherwise.
    ///
    /// A class's attribute that holds a class reference, or an optional one, goes through the key path: it may be
    /// declared `weak` or `unowned`, whose storage is not a plain reference.
    private static func reader<V>(_ keyPath: KeyPath<M, V> & Sendable) -> @Sendable (ModelAddress) -> V {
        let holdsObject = V.self is AnyObject.Type || (V.self as? any AnyOptional.Type)?.wrappedType is AnyObject.Type
        let objectOffset = (M.self as? AnyClass).flatMap { type in
            isComputed(keyPath) || holdsObject
                ? nil : ObjectContents.offset(ofAttribute: fieldName(of: keyPath), ofType: V.self, in: type)
        }
        return ModelAddress.reader(of: keyPath, objectOffset: objectOffset)
    }

    private static func encoder<V: IndexKeyEncodable>(_: V.Type) -> @Sendable (Any) -> [UInt8]? {
        { value in
            // A value of the attribute's very type (the common case) is taken out of its box by comparing types, and
            // encoded without an optional of it, whose metadata generic code looks up at each use; `as?` takes it
            // out too, at several times the cost, and also converts (an optional's wrapped value).
            func encodeExactly<T>(_ value: T) -> [UInt8]? {
                T.self == V.self ? encodedKey(of: knownTypeCast(value, to: V.self)) : nil
            }
            if let key = encodeExactly(value) { return key }
            return convertedKey(of: value, as: V.self)
        }
    }

    /// The key component of `value`.
    private static func encodedKey<V: IndexKeyEncodable>(of value: V) -> [UInt8] {
        var key: [UInt8] = []
        value.appendIndexKey(to: &key)
        return key
    }

    /// The key component of `value` converted to `V` by `as?`, or `nil` when it does not convert: the slow path of an
    /// encoder, apart so that the fast path does not look up the metadata of `Optional<V>` at every call.
    @inline(never)
    private static func convertedKey<V: IndexKeyEncodable>(of value: Any, as _: V.Type) -> [UInt8]? {
        guard let value = value as? V else { return nil }
        return encodedKey(of: value)
    }

    /// Whether `keyPath` goes through a computed property (`var nameFolded: String { name.lowercased() }`): its
    /// index keys come from the model, not from a stored field, so a program that does not declare the index cannot
    /// compute them from records. The runtime prints such a component as `<computed ADDRESS (Type)>`, an address
    /// that changes between builds, so an index on one must be given a name (``SchemaLoader`` checks).
    static func isComputed(_ keyPath: AnyKeyPath) -> Bool {
        String(describing: keyPath).contains(computedMarker)
    }

    /// How the runtime prints a computed component of a key path, and so how a name made from one begins.
    static var computedMarker: String { "<computed " }

    /// The property name a key path ends with: `\Task.project.name` gives `project.name`.
    static func fieldName(of keyPath: AnyKeyPath) -> String {
        // Key paths print as `\Type.property.property` in debug and release builds alike.
        let text = String(describing: keyPath)
        let typeName = String(describing: M.self)
        if let range = text.range(of: "\\" + typeName + ".") {
            return String(text[range.upperBound...])
        }
        return text.split(separator: ".", maxSplits: 1).last.map(String.init) ?? text
    }
}
