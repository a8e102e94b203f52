import Synchronization

/// Where in a record a field name is looked up: the record's own object, or the objects nested in its values.
///
/// The two share one table of ids, and name an id alike until a migration renames a field of the record's own
/// object (``FieldTable/rename(_:to:)``): that field's id then has its new name at the top level and keeps its old
/// one in nested values, whose types did not change.
package enum FieldScope: Sendable {
    /// The fields of the record's own object: the model's stored properties.
    case topLevel
    /// The fields of the objects nested in the record's values: structs, enum payloads, superclasses.
    case nested
}

/// An entity's field names, interned as small integer ids, with the kind of
/// value first stored in each top-level field.
///
/// Records store field ids instead of names, so the table is what makes them
/// readable: it is persisted in the catalog, and every keyed container of the
/// entity (the model's own fields and those of nested structs and enum
/// payloads) shares its ids. Dictionary keys are data and are never interned.
///
/// Each id has one name in ``names``, used in every object of a record, except for the top-level fields a
/// migration renamed: ``topLevelNames`` gives those their new names at the top level only, so that a nested field
/// of the old name keeps it (a ``FieldScope``). A top-level name shadows the same name in ``names`` at the top
/// level, and a top-level field named like a renamed field's old name gets an id of its own whose entry in
/// ``names`` repeats that name; in nested values the name's first id keeps it.
///
/// Ids start at 1 and are never reused or renumbered: names are only
/// appended. After encoding, compare ``revision`` (or ``count``, which only
/// counts names) with its value when the table was loaded or last persisted
/// to know whether the catalog must be rewritten in the same transaction.
///
/// ```swift
/// var fields = FieldTable()
/// let id = fields.id(for: "title", in: .topLevel)   // 1
/// fields.name(for: id, in: .topLevel)               // "title"
/// ```
package struct FieldTable: Sendable, Equatable {
    /// The interned names, in id order: the name of id `n` is at index `n - 1`; at the top level,
    /// ``topLevelNames`` overrides it.
    package private(set) var names: [String] = []
    /// The new names of the top-level fields that migrations renamed, by id; empty for a table never renamed.
    package var topLevelNames: [UInt32: String] { scopes?.topLevelNames ?? [:] }
    /// The kind first observed for each id; nil until a top-level value other than null was stored.
    private var kinds: [ValueKind?] = []
    /// The id of each name in nested values, and at the top level of a table never renamed: the first id with that
    /// name in ``names``.
    private var ids: [String: UInt32] = [:]
    /// The names by scope of a table a migration renamed; `nil` for one never renamed, whose every name is the same
    /// in both scopes. One optional reference, since every reader of the entity copies the table.
    private var scopes: RenameScopes?
    /// How many changes (new names, newly known kinds) the table had since it
    /// was created or decoded; not persisted.
    package private(set) var revision = 0 {
        didSet { identity = Self.newIdentity() }
    }
    /// A number no other table has, shared by copies until one of them changes (every change advances
    /// ``revision``, which gives the changed copy a new one).
    private var identity = FieldTable.newIdentity()
    /// The last identity handed out.
    private static let identities = Atomic<UInt64>(0)

    /// A new identity.
    private static func newIdentity() -> UInt64 {
        identities.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Creates an empty table.
    package init() {}

    /// The number of interned names, which is also the largest id.
    package var count: Int { names.count }

    /// Returns the id of `name` in `scope`, interning it with the next id if it is new there.
    package mutating func id(for name: String, in scope: FieldScope) -> UInt32 {
        if let id = existingID(for: name, in: scope) { return id }
        names.append(name)
        kinds.append(nil)
        let id = UInt32(names.count)
        // The name is new in `scope`; in the other scope it may already name another id, which keeps it.
        if ids[name] == nil { ids[name] = id }
        if let scopes {
            var topLevelIDs = scopes.topLevelIDs
            if topLevelIDs[name] == nil { topLevelIDs[name] = id }
            self.scopes = RenameScopes(
                topLevelNames: scopes.topLevelNames, topLevelIDs: topLevelIDs,
                topLevel: scopes.topLevel + [topLevelIDs[name] == id ? name : nil],
                nested: scopes.nested + [ids[name] == id ? name : nil])
        }
        revision += 1
        return id
    }

    /// Whether `other` is a copy of this table that neither has changed since: the same identity.
    ///
    /// A cheap check, without comparing names, that lets a decoder keep the table it holds instead of assigning an
    /// equal one, and paying for its reference counting, for every record. Every change advances ``revision``,
    /// which gives the changed table an identity of its own, so a `true` answer means equal contents.
    package func isIdentical(to other: FieldTable) -> Bool {
        identity == other.identity
    }

    /// Returns the id of `name` in `scope`, or nil if it names none there.
    @inline(__always)
    package func existingID(for name: String, in scope: FieldScope) -> UInt32? {
        guard scope == .topLevel, let scopes else { return ids[name] }
        return scopes.topLevelIDs[name]
    }

    /// Gives the top-level field `old` the name `new`, keeping its id, so that stored records read it under the new
    /// name; a nested field named `old` keeps its name.
    ///
    /// - Returns: Whether the field was renamed: `false` when `old` names no top-level field or `new` already names
    ///   one (a field of a nested value counts, since the table cannot tell where a name is used).
    package mutating func rename(_ old: String, to new: String) -> Bool {
        guard let id = existingID(for: old, in: .topLevel), existingID(for: new, in: .topLevel) == nil else {
            return false
        }
        var topLevelNames = self.topLevelNames
        topLevelNames[id] = names[Int(id) - 1] == new ? nil : new
        resolveScopes(topLevelNames)
        revision += 1
        return true
    }

    /// Rebuilds the name-to-id maps and the names by scope from ``names`` and `topLevelNames`.
    ///
    /// In nested values a name is its first id's. At the top level, the names `topLevelNames` gives come first;
    /// then each other id has its name in ``names`` unless a top-level name or an earlier id has it.
    private mutating func resolveScopes(_ topLevelNames: [UInt32: String]) {
        ids = [:]
        for (offset, name) in names.enumerated() where ids[name] == nil { ids[name] = UInt32(offset + 1) }
        guard !topLevelNames.isEmpty else {
            scopes = nil
            return
        }
        var topLevelIDs: [String: UInt32] = [:]
        for (id, name) in topLevelNames { topLevelIDs[name] = id }
        for (offset, name) in names.enumerated()
        where topLevelNames[UInt32(offset + 1)] == nil && topLevelIDs[name] == nil {
            topLevelIDs[name] = UInt32(offset + 1)
        }
        scopes = RenameScopes(
            topLevelNames: topLevelNames, topLevelIDs: topLevelIDs,
            topLevel: names.indices.map { offset in
                let id = UInt32(offset + 1)
                let name = topLevelNames[id] ?? names[offset]
                return topLevelIDs[name] == id ? name : nil
            },
            nested: names.indices.map { offset in ids[names[offset]] == UInt32(offset + 1) ? names[offset] : nil })
    }

    /// Returns the name of `id` in `scope`, or nil for an id that names no field there.
    package func name(for id: UInt32, in scope: FieldScope) -> String? {
        guard id >= 1, Int(id) <= names.count else { return nil }
        // A table never renamed names each id alike in both scopes.
        guard let scopes else { return names[Int(id) - 1] }
        if scope == .topLevel { return scopes.topLevel[Int(id) - 1] }
        return scopes.nested[Int(id) - 1]
    }

    /// Returns whether `id` names `name` in `scope`; a fast check that avoids hashing the name.
    @inline(__always)
    func id(_ id: UInt64, isNamed name: String, in scope: FieldScope) -> Bool {
        guard id >= 1, id <= UInt64(names.count) else { return false }
        guard let scopes else { return names[Int(id) - 1] == name }
        if scope == .topLevel { return scopes.topLevel[Int(id) - 1] == name }
        return scopes.nested[Int(id) - 1] == name
    }

    /// The kind of value first stored in the top-level field `id`, or nil if
    /// none (or only null) was stored yet.
    ///
    /// A Boolean field reports `.false` or `.true`, whichever came first;
    /// ``ValueKind/typeName`` calls both `bool`.
    package func kind(of id: UInt32) -> ValueKind? {
        guard id >= 1, Int(id) <= kinds.count else { return nil }
        return kinds[Int(id) - 1]
    }

    /// Records `kind` for the field `id` unless a kind is already known;
    /// null is never recorded.
    package mutating func observe(_ kind: ValueKind, for id: UInt32) {
        guard kind != .null, id >= 1, Int(id) <= kinds.count, kinds[Int(id) - 1] == nil else { return }
        kinds[Int(id) - 1] = kind
        revision += 1
    }

    /// Tables are equal when they have the same names, top-level names and kinds, by id; ``revision`` is not
    /// compared.
    package static func == (lhs: FieldTable, rhs: FieldTable) -> Bool {
        lhs.names == rhs.names && lhs.topLevelNames == rhs.topLevelNames && lhs.kinds == rhs.kinds
    }
}

extension FieldTable: Codable {
    /// The persisted properties; the name-to-id maps are rebuilt on decoding.
    ///
    /// `topLevelNames` is left out while empty, so that a table never renamed persists as it did before renames
    /// were scoped, and a table persisted then reads as one whose renames (made by that code) apply everywhere.
    private enum CodingKeys: String, CodingKey {
        case names
        case kinds
        case topLevelNames
    }

    /// Decodes a table persisted in the catalog.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a name that two ids have in the same scope, a top-level name of
    ///   an id the table does not have, or kinds that do not match the names.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let names = try container.decode([String].self, forKey: .names)
        let kinds = try container.decodeIfPresent([ValueKind?].self, forKey: .kinds) ?? []
        let persistedTopLevelNames =
            try container.decodeIfPresent([String: String].self, forKey: .topLevelNames) ?? [:]
        guard kinds.count <= names.count else {
            throw DecodingError.dataCorruptedError(
                forKey: .kinds, in: container, debugDescription: "More field kinds than field names.")
        }
        var topLevelNames: [UInt32: String] = [:]
        for (key, name) in persistedTopLevelNames {
            guard let id = UInt32(key), id >= 1, Int(id) <= names.count else {
                throw DecodingError.dataCorruptedError(
                    forKey: .topLevelNames, in: container,
                    debugDescription: "The top-level name \"\(name)\" is given to \(key), which is not a field id.")
            }
            topLevelNames[id] = name
        }
        // Each scope names each id once: the top-level names differ, and so do the names of the ids without one
        // (an id with a top-level name may repeat another id's entry in `names`).
        var seen = Set<String>()
        for name in topLevelNames.values.sorted() {
            guard seen.insert(name).inserted else {
                throw DecodingError.dataCorruptedError(
                    forKey: .topLevelNames, in: container,
                    debugDescription: "The top-level field name \"\(name)\" appears twice.")
            }
        }
        seen = []
        for (offset, name) in names.enumerated() where topLevelNames[UInt32(offset + 1)] == nil {
            guard seen.insert(name).inserted else {
                throw DecodingError.dataCorruptedError(
                    forKey: .names, in: container, debugDescription: "Field name \"\(name)\" appears twice.")
            }
        }
        self.init()
        self.names = names
        self.kinds = names.indices.map { $0 < kinds.count ? kinds[$0] : nil }
        resolveScopes(topLevelNames)
        revision = 0
    }

    /// Encodes the names and kinds in id order, and the top-level names by id when there are any.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(names, forKey: .names)
        try container.encode(kinds, forKey: .kinds)
        if !topLevelNames.isEmpty {
            let persisted = Dictionary(uniqueKeysWithValues: topLevelNames.map { (String($0.key), $0.value) })
            try container.encode(persisted, forKey: .topLevelNames)
        }
    }
}

/// The names by scope of a table that a migration renamed (see ``FieldScope``). Immutable: a change to the table makes
/// a new one, which a table never renamed never pays for.
private final class RenameScopes: Sendable {
    /// The new names of the renamed top-level fields, by id.
    let topLevelNames: [UInt32: String]
    /// The id of each name at the top level.
    let topLevelIDs: [String: UInt32]
    /// The top-level name of each id, by position, nil where it names no top-level field: the codecs compare names by
    /// id for every field, and this keeps hashing out of that.
    let topLevel: [String?]
    /// The nested name of each id, by position, nil where it names no nested field.
    let nested: [String?]

    init(topLevelNames: [UInt32: String], topLevelIDs: [String: UInt32], topLevel: [String?], nested: [String?]) {
        self.topLevelNames = topLevelNames
        self.topLevelIDs = topLevelIDs
        self.topLevel = topLevel
        self.nested = nested
    }
}
