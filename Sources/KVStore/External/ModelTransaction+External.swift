import Foundation
import LMDB

extension ModelTransaction {
    /// The bytes of an external value of the stored model with `model`'s ID, read in this transaction.
    ///
    /// A value not saved yet (set with ``ExternalData/init(_:)`` on a model not saved since) is returned as it is.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model; only its ID counts once its value is stored, so the bytes are the stored model's.
    /// - Returns: The value's bytes, all in memory: use ``write(_:of:to:)`` for values larger than memory.
    /// - Throws: ``KVStoreError/modelNotFound`` when no model has the ID, ``KVStoreError/missingExternalData``
    ///   when chunks are missing, ``KVStoreError/invalidModel`` when the attribute is not external.
    public func data<M: Model>(for keyPath: WritableKeyPath<M, ExternalData>, of model: M) throws -> Data {
        if case .pending(let data) = model[keyPath: keyPath].content { return data }
        return try run {
            let store = try container.store(for: M.self)
            let (attribute, _) = try store.externalAttribute(keyPath)
            var data = Data()
            try store.forEachChunk(of: attribute, id: model.id, in: transaction.pointee) { data.append(contentsOf: $0) }
            return data
        }
    }

    /// Writes the bytes of an external value of the stored model with `model`'s ID to `handle`, one chunk at a time.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model; only its ID counts once its value is stored.
    ///   - handle: Where to write, from its current offset.
    /// - Throws: The errors of ``data(for:of:)``, or the file's error.
    public func write<M: Model>(_ keyPath: WritableKeyPath<M, ExternalData>, of model: M, to handle: FileHandle)
        throws
    {
        if case .pending(let data) = model[keyPath: keyPath].content {
            try handle.write(contentsOf: data)
            return
        }
        try run {
            let store = try container.store(for: M.self)
            let (attribute, _) = try store.externalAttribute(keyPath)
            try store.forEachChunk(of: attribute, id: model.id, in: transaction.pointee) { chunk in
                try handle.write(contentsOf: chunk)
            }
        }
    }
}
