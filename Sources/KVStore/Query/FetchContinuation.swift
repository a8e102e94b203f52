import Foundation

/// Where a paged listing stopped: give it back to ``ModelContext/fetchPage(_:after:limit:)-2puva``
/// to read the models that come after, in the descriptor's order.
///
/// A continuation is keyset pagination: it holds the last model a page returned (its sort values and ID), and the
/// next page holds the models that sort after it, as the store is when that page is read. So it stays valid
/// across any writes in between: no model that stayed in place is returned twice or skipped, a model inserted after
/// the position comes in a later page, and one deleted does not come. Pages hold no transaction or memory between
/// calls, and a continuation can be kept for as long as needed: encoded (`Codable`, as one string), or as its
/// ``token``, in a URL or a file, like the continuations of FoundationDB's Record Layer.
///
/// It is tied to what it was made for: the entity, the descriptor (its predicate, sort, offset and limit), and the
/// store's schema version. Resuming with another descriptor, on a store whose schema was migrated since, or with a
/// token that is not a continuation throws ``KVStoreError/invalidContinuation``: start the listing again.
///
/// ```swift
/// var page = try context.fetchPage(descriptor, limit: 100)
/// while let next = page.continuation {
///     page = try context.fetchPage(descriptor, after: next, limit: 100)
/// }
/// ```
public struct FetchContinuation: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What the continuation holds, encoded into its token.
    struct Contents: Codable, Equatable {
        /// The format of this structure.
        var format = 1
        /// The entity listed.
        var entity: String
        /// The store's schema version when the page was read, if it has one.
        var schemaVersion: String?
        /// A hash of the descriptor's predicate, sort, offset and limit.
        var descriptor: UInt64
        /// The last model returned, encoded as a property list.
        var last: Data
        /// How many models the listing returned so far, for the descriptor's limit.
        var delivered: Int
    }

    /// The continuation as text: URL-safe base64, without padding.
    public let token: String

    /// Reads a continuation from its ``token``.
    ///
    /// - Throws: ``KVStoreError/invalidContinuation`` when `token` is not the token of a continuation.
    public init(token: String) throws {
        _ = try Self.contents(of: token)
        self.token = token
    }

    init(_ contents: Contents) throws {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let data = try encoder.encode(contents)
        token = data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// What `token` holds.
    ///
    /// - Throws: ``KVStoreError/invalidContinuation`` when it is not the token of a continuation.
    static func contents(of token: String) throws -> Contents {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let contents = try? PropertyListDecoder().decode(Contents.self, from: data), contents.format == 1
        else {
            throw KVStoreError(
                .invalidContinuation,
                message: "The text is not a continuation of a KVStore listing: start the listing again")
        }
        return contents
    }

    /// Decodes a continuation from its ``token``, a single string.
    ///
    /// - Throws: `DecodingError` when the value is not a string, ``KVStoreError/invalidContinuation`` when it is not
    ///   the token of a continuation.
    public init(from decoder: any Decoder) throws {
        try self.init(token: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the continuation as its ``token``, a single string.
    ///
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(token)
    }

    /// The token.
    public var description: String { token }
}

/// A page of a listing: the models, in the descriptor's order, and where the next page starts.
public struct FetchPage<M> {
    /// The models of the page, at most the limit asked for.
    public var models: [M]
    /// Where the next page starts; `nil` when the listing is over.
    public var continuation: FetchContinuation?
}

extension FetchPage: Sendable where M: Sendable {}

extension FetchDescriptor {
    /// A hash of what a continuation must be resumed with: the predicate's expression (with its constants), the sort
    /// descriptors, the offset and the limit. FNV-1a over their description, stable across runs.
    var continuationHash: UInt64 {
        var text = predicate.map { String(describing: $0.expression) } ?? "all"
        for descriptor in sortBy {
            text += "|" + (descriptor.keyPath.map { String(describing: $0) } ?? "?")
            text += descriptor.order == .forward ? "+" : "-"
        }
        text += "|\(fetchOffset)|\(fetchLimit.map(String.init) ?? "-")"
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// Whether `model` comes before `other` in the descriptor's order: its sort descriptors, then ID order, the order
    /// of a fetch.
    func precedes(_ model: M, _ other: M) -> Bool {
        for descriptor in sortBy {
            switch descriptor.compare(model, other) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return model.id.isOrdered(before: other.id)
    }
}

/// The first `limit` models of those offered, in a descriptor's order: what a page keeps while it reads every
/// candidate, in memory for `limit` models only.
struct FirstModels<M: StoredModel> {
    let descriptor: FetchDescriptor<M>
    let limit: Int
    /// The models kept, in order.
    private(set) var models: [M] = []

    init(_ descriptor: FetchDescriptor<M>, limit: Int) {
        self.descriptor = descriptor
        self.limit = limit
        models.reserveCapacity(min(limit, 1024))
    }

    /// Whether a model offered now could be kept: there is room, or it comes before the last one kept.
    func wouldKeep(_ model: M) -> Bool {
        guard limit > 0 else { return false }
        guard models.count == limit, let last = models.last else { return true }
        return descriptor.precedes(model, last)
    }

    /// Keeps `model` in its place when it is among the first `limit`.
    mutating func offer(_ model: M) {
        guard wouldKeep(model) else { return }
        var low = 0
        var high = models.count
        while low < high {
            let middle = (low + high) / 2
            if descriptor.precedes(models[middle], model) { low = middle + 1 } else { high = middle }
        }
        models.insert(model, at: low)
        if models.count > limit { models.removeLast() }
    }
}
