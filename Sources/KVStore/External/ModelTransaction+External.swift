import Foundation
import LMDB

extension ModelTransaction {
    /// The bytes of an external value of the stored model with `model`'s ID, read in this transaction.
    ///
    /// The stored model's value is read, whatever `model` holds; when no model with the ID is stored, a value not
    /// saved yet (set with ``ExternalData/init(_:)``) is returned as `model` holds it.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model; only its ID counts once its value is stored, so the bytes are the stored model's.
    /// - Returns: The value's bytes, all in memory: use ``write(_:of:to:)-(WritableKeyPath<M,ExternalData>,_,_)`` for
    ///   values larger than memory.
    /// - Throws: ``KVStoreError/modelNotFound`` when no model has the ID, ``KVStoreError/missingExternalData``
    ///   when chunks are missing, ``KVStoreError/invalidModel`` when the attribute is not external.
    public func data<M: StoredModel>(for keyPath: WritableKeyPath<M, ExternalData>, of model: M) throws -> Data {
        try externalData(for: keyPath, of: model) ?? Data()
    }

    /// The bytes of an optional external value of the stored model with `model`'s ID, read in this transaction, or
    /// `nil` when it holds no value.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model; only its ID counts once it is stored.
    /// - Returns: The value's bytes, all in memory, or `nil`.
    /// - Throws: What ``data(for:of:)-(WritableKeyPath<M,ExternalData>,_)`` throws.
    public func data<M: StoredModel>(for keyPath: WritableKeyPath<M, ExternalData?>, of model: M) throws -> Data? {
        try externalData(for: keyPath, of: model)
    }

    /// Writes the bytes of an external value of the stored model with `model`'s ID to `handle`, one chunk at a time.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model; only its ID counts once its value is stored.
    ///   - handle: Where to write, from its current offset.
    /// - Throws: The errors of ``data(for:of:)-(WritableKeyPath<M,ExternalData>,_)``, or the file's error.
    public func write<M: StoredModel>(
        _ keyPath: WritableKeyPath<M, ExternalData>, of model: M, to handle: FileHandle
    )
        throws
    {
        _ = try writeExternal(keyPath, of: model, to: handle)
    }

    /// Writes the bytes of an optional external value of the stored model with `model`'s ID to `handle`, one chunk at
    /// a time; writes nothing when it holds no value.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model; only its ID counts once it is stored.
    ///   - handle: Where to write, from its current offset.
    /// - Returns: Whether the attribute holds a value.
    /// - Throws: The errors of ``data(for:of:)-(WritableKeyPath<M,ExternalData>,_)``, or the file's error.
    @discardableResult
    public func write<M: StoredModel>(
        _ keyPath: WritableKeyPath<M, ExternalData?>, of model: M, to handle: FileHandle
    ) throws -> Bool {
        try writeExternal(keyPath, of: model, to: handle)
    }

    /// The bytes of the value at `keyPath`, or `nil` when an optional attribute holds none.
    private func externalData<M: StoredModel>(for keyPath: AnyKeyPath, of model: M) throws -> Data? {
        try run {
            let store = try container.store(for: M.self)
            switch try store.valueToRead(keyPath, of: model, in: transaction.pointee) {
            case .none:
                return nil
            case .pending(let data):
                return data
            case .stored(let attribute, let descriptor):
                var data = Data()
                // Capped: the size comes from the store, and a damaged one must not reserve the impossible.
                data.reserveCapacity(min(descriptor.byteCount, 1 << 30))
                try store.forEachChunk(of: attribute, descriptor: descriptor, id: model.id, in: transaction.pointee) {
                    data.append(contentsOf: $0)
                }
                return data
            }
        }
    }

    /// Writes the bytes of the value at `keyPath` to `handle`; returns whether there is a value.
    private func writeExternal<M: StoredModel>(_ keyPath: AnyKeyPath, of model: M, to handle: FileHandle) throws -> Bool
    {
        try run {
            let store = try container.store(for: M.self)
            switch try store.valueToRead(keyPath, of: model, in: transaction.pointee) {
            case .none:
                return false
            case .pending(let data):
                try handle.write(contentsOf: data)
            case .stored(let attribute, let descriptor):
                try store.forEachChunk(of: attribute, descriptor: descriptor, id: model.id, in: transaction.pointee) {
                    try handle.write(contentsOf: Data($0))
                }
            }
            return true
        }
    }
}
