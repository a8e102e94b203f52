import Synchronization

/// An entity's field names, interned as small integer ids, with the kind of
/// value first stored in each top-level field.
///
/// Records store field ids instead of names, so the table is what makes them
/// readable: it is persisted in the catalog, and every keyed container of the
/// entity (the model's own fields and those of nested structs and enum
/// payloads) shares it. Dictionary keys are data and are never interned.
///
/// Ids start at 1 and are never reused or renumbered: names are only
/// appended. After encoding, compare ``revision`` (or ``count``, which only
/// counts names) with its value when the table was loaded or last persisted
/// to know whether the catalog must be rewritten in the same transaction.
///
/// ```swift
/// var fields = FieldTable()
/// let id = fields.id(for: "title")   // 1
/// fields.name(for: id)               // "title"
/// ```
package struct FieldTable: Sendable, Equatable {
    /// The interned names, in id order: the name of id `n` is at index `n - 1`.
    package private(set) var names: [String] = []
    /// The kind first observed for each id; nil until a top-level value other than null was stored.
    private var kinds: [ValueKind?] = []
    /// The id of each name.
    private var ids: [String: UInt32] = [:]
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

    /// Returns the id of `name`, interning it with the next id if it is new.
    package mutating func id(for name: String) -> UInt32 {
        if let id = ids[name] { return id }
        names.append(name)
        kinds.append(nil)
        let id = UInt32(names.count)
        ids[name] = id
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

    /// Returns the id of `name`, or nil if it was never interned.
    package func existingID(for name: String) -> UInt32? {
        ids[name]
    }

    /// Gives the field `old` the name `new`, keeping its id, so that stored records read it under the new name.
    ///
    /// - Returns: Whether the field was renamed: `false` when `old` is not in the table or `new` already is.
    package mutating func rename(_ old: String, to new: String) -> Bool {
        guard let id = ids[old], ids[new] == nil else { return false }
        names[Int(id) - 1] = new
        ids[old] = nil
        ids[new] = id
        revision += 1
        return true
    }

    /// Returns the name of `id`, or nil for an id the table does not have.
    package func name(for id: UInt32) -> String? {
        guard id >= 1, Int(id) <= names.count else { return nil }
        return names[Int(id) - 1]
    }

    /// Returns whether `id` names `name`; a fast check that avoids hashing the name.
    @inline(__always)
    func id(_ id: UInt64, isNamed name: String) -> Bool {
        guard id >= 1, id <= UInt64(names.count) else { return false }
        return names[Int(id) - 1] == name
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

    /// Tables are equal when they have the same names and kinds in the same
    /// order; ``revision`` is not compared.
    package static func == (lhs: FieldTable, rhs: FieldTable) -> Bool {
        lhs.names == rhs.names && lhs.kinds == rhs.kinds
    }
}

extension FieldTable: Codable {
    /// The persisted properties; the name-to-id map is rebuilt on decoding.
    private enum CodingKeys: String, CodingKey {
        case names
        case kinds
    }

    /// Decodes a table persisted in the catalog.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a duplicate name, or kinds
    ///   that do not match the names.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let names = try container.decode([String].self, forKey: .names)
        let kinds = try container.decodeIfPresent([ValueKind?].self, forKey: .kinds) ?? []
        guard kinds.count <= names.count else {
            throw DecodingError.dataCorruptedError(
                forKey: .kinds, in: container, debugDescription: "More field kinds than field names.")
        }
        self.init()
        for name in names {
            guard ids[name] == nil else {
                throw DecodingError.dataCorruptedError(
                    forKey: .names, in: container, debugDescription: "Field name \"\(name)\" appears twice.")
            }
            _ = id(for: name)
        }
        for (index, kind) in kinds.enumerated() {
            self.kinds[index] = kind
        }
        revision = 0
    }

    /// Encodes the names and kinds in id order.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(names, forKey: .names)
        try container.encode(kinds, forKey: .kinds)
    }
}
