import Foundation

/// A large value kept apart from its model's record, in chunks: the type of an attribute declared in the
/// `externalStorage` of ``Entity/init(name:indexes:relationships:originalName:renamedFields:externalStorage:removedIndexes:preservedOnDeletion:)``,
/// like SwiftData's `@Attribute(.externalStorage)`.
///
/// The record holds only a small descriptor (the value's size and where its chunks are), so records stay small and
/// fetching a model does not read its large values. Set small content with ``init(_:)`` and save the model as usual;
/// stream large content with ``ModelContainer/setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)``. Read the bytes back with
/// ``ModelContainer/data(for:of:)-(WritableKeyPath<M,ExternalData>,_)``,
/// ``ModelContainer/write(_:of:to:)-(WritableKeyPath<M,ExternalData>,_,_)`` or
/// ``ModelContainer/chunks(for:of:)-(WritableKeyPath<M,ExternalData>,_)``.
///
/// ```swift
/// struct Photo: Model {
///     var id = UUID.timeOrdered()
///     var title: String
///     var image = ExternalData()
///
///     static let entity = Entity<Photo>(externalStorage: [.attribute(\.image)])
/// }
///
/// let photo = Photo(title: "Dunes", image: ExternalData(jpegBytes))
/// try container.write { try $0.insert(photo) }
/// let fetched = try container.read { try $0.model(for: photo.id, as: Photo.self) }
/// fetched?.image.byteCount      // known without reading the bytes
/// let bytes = try container.data(for: \.image, of: fetched!)
/// ```
///
/// Saving a model whose value was fetched and left unchanged writes no chunk. Deleting a model deletes its values in
/// the same transaction, whatever the path of the delete (a context, a batch delete, a cascade).
///
/// An attribute may be optional, `var photo: ExternalData?`, declared the same way: `nil` stores nothing, and saving
/// a model whose stored value was set to `nil` deletes its chunks. A stored value assigned to another model (or to
/// another external attribute) is copied when that model is saved: the save streams the chunks into the new owner
/// before it commits, and each model then owns its own.
public struct ExternalData: Sendable, Hashable {
    /// What the value holds: bytes to write on the next save, or the descriptor of stored chunks and, for a value read
    /// from a store, whose chunks they are.
    enum Content: Sendable, Hashable {
        case pending(Data)
        case stored(ExternalValueDescriptor, origin: ExternalValueOrigin?)
    }

    var content: Content

    /// An empty value.
    public init() {
        content = .pending(Data())
    }

    /// A value with `data` as its content, written in chunks when its model is saved.
    ///
    /// The bytes are held in memory until then; for content larger than memory, save the model with an empty value
    /// and stream the content with ``ModelContainer/setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)``.
    public init(_ data: Data) {
        content = .pending(data)
    }

    init(stored descriptor: ExternalValueDescriptor, origin: ExternalValueOrigin? = nil) {
        content = .stored(descriptor, origin: origin)
    }

    /// The size of the value in bytes, known without reading it.
    public var byteCount: Int {
        switch content {
        case .pending(let data): data.count
        case .stored(let descriptor, _): descriptor.byteCount
        }
    }

    /// Whether the value is stored, as in a fetched model, rather than waiting for its model's save.
    public var isStored: Bool {
        if case .stored = content { return true }
        return false
    }

    /// The descriptor of the stored chunks, or `nil` for a value not saved yet.
    var descriptor: ExternalValueDescriptor? {
        if case .stored(let descriptor, _) = content { return descriptor }
        return nil
    }

    /// Whose chunks a stored value's are, when it was read from a store; `nil` for a value not saved yet, or decoded
    /// apart from a store.
    var origin: ExternalValueOrigin? {
        if case .stored(_, let origin) = content { return origin }
        return nil
    }

    /// The value with `origin` as the owner of its chunks; a value not saved yet is returned as it is.
    func withOrigin(_ origin: ExternalValueOrigin) -> ExternalData {
        guard case .stored(let descriptor, _) = content else { return self }
        return ExternalData(stored: descriptor, origin: origin)
    }
}

/// Where the chunks of a stored value are: the store, the entity, the model that owns them and its field.
///
/// A fetch stamps it on every stored value it reads, so that a save can tell a model's own value from one assigned
/// from another model, which it copies.
struct ExternalValueOrigin: Sendable, Hashable {
    /// The entity's store in the container that read the value, as an object this layer does not name (an
    /// `EntityStore`).
    let store: any AnyObject & Sendable
    /// The entity's name.
    let entity: String
    /// The ID of the model that owns the chunks.
    let owner: UUID
    /// The field's id, part of the chunks' keys.
    let field: UInt32
    /// The field's name, for messages.
    let fieldName: String

    static func == (lhs: ExternalValueOrigin, rhs: ExternalValueOrigin) -> Bool {
        lhs.store === rhs.store && lhs.owner == rhs.owner && lhs.field == rhs.field && lhs.entity == rhs.entity
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(store))
        hasher.combine(owner)
        hasher.combine(field)
    }
}

extension ExternalData: Codable {
    /// Decodes the descriptor a record holds.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a descriptor whose sizes no store writes (damaged bytes), or what
    ///   `decoder` throws for a missing or mistyped field.
    public init(from decoder: any Decoder) throws {
        content = .stored(try ExternalValueDescriptor(from: decoder), origin: nil)
    }

    /// Encodes the descriptor of a stored value.
    ///
    /// - Throws: `EncodingError.invalidValue` for a value not saved yet: its bytes go to the store's chunks, never
    ///   into an encoding.
    public func encode(to encoder: any Encoder) throws {
        guard let descriptor else {
            if let record = encoder as? RecordEncoding, record.encodesUnsavedExternalValues {
                // An encoding never stored: the size stands for the bytes, under no value's ID.
                let placeholder = ExternalValueDescriptor(
                    valueID: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), byteCount: byteCount,
                    chunkSize: 1)
                return try placeholder.encode(to: encoder)
            }
            throw EncodingError.invalidValue(
                self,
                EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription: "ExternalData holds \(byteCount) bytes not saved yet: declare the attribute in "
                        + "its entity's externalStorage, so that saving the model writes them in chunks"))
        }
        try descriptor.encode(to: encoder)
    }
}

/// What a record holds of an external value: which chunks hold it and how big it is.
///
/// The chunks of a value are keyed by its owner's ID, the field's id and ``valueID``: a value written again gets a
/// new ``valueID``, so a reader streaming the old one never mixes chunks of two values.
struct ExternalValueDescriptor: Codable, Sendable, Hashable {
    /// The value's identity among the values the field ever held.
    var valueID: UUID
    /// The value's size in bytes.
    var byteCount: Int
    /// The size of every chunk but the last, which holds the rest.
    var chunkSize: Int

    private enum CodingKeys: String, CodingKey {
        case valueID = "id"
        case byteCount = "size"
        case chunkSize
    }

    init(valueID: UUID, byteCount: Int, chunkSize: Int) {
        self.valueID = valueID
        self.byteCount = byteCount
        self.chunkSize = chunkSize
    }

    /// Decodes a descriptor, refusing sizes no store writes, so that damaged bytes throw rather than drive a read.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        valueID = try container.decode(UUID.self, forKey: .valueID)
        byteCount = try container.decode(Int.self, forKey: .byteCount)
        chunkSize = try container.decode(Int.self, forKey: .chunkSize)
        guard byteCount >= 0, chunkSize > 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .byteCount, in: container,
                debugDescription: "An external value of \(byteCount) bytes in chunks of \(chunkSize) bytes")
        }
    }

    /// How many chunks hold the value: none for an empty value.
    var chunkCount: Int {
        chunkSize > 0 ? byteCount / chunkSize + (byteCount % chunkSize == 0 ? 0 : 1) : 0
    }

    /// The size of chunk `index`.
    func size(ofChunk index: Int) -> Int {
        index < chunkCount - 1 ? chunkSize : byteCount - (chunkCount - 1) * chunkSize
    }
}
