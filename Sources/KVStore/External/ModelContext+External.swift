import Foundation

extension ModelContext {
    /// The bytes of an external value of the stored model with `model`'s ID, or the bytes it was given when it is
    /// not saved yet.
    ///
    /// ```swift
    /// let photo = try context.model(for: id, as: Photo.self)!
    /// let bytes = try context.data(for: \.image, of: photo)
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    /// - Returns: The value's bytes, all in memory: use ``write(_:of:to:)-(WritableKeyPath<M,ExternalData>,_,_)`` for
    ///   values larger than memory.
    /// - Throws: What ``ModelTransaction/data(for:of:)-(WritableKeyPath<M,ExternalData>,_)`` throws.
    public func data<M: StoredModel>(for keyPath: WritableKeyPath<M, ExternalData>, of model: M) throws -> Data {
        try container.data(for: keyPath, of: model)
    }

    /// The bytes of an optional external value of the stored model with `model`'s ID (or the bytes it was given when
    /// it is not saved yet), or `nil` when it holds none.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    /// - Returns: The value's bytes, all in memory, or `nil`.
    /// - Throws: What ``ModelTransaction/data(for:of:)-(WritableKeyPath<M,ExternalData>,_)`` throws.
    public func data<M: StoredModel>(for keyPath: WritableKeyPath<M, ExternalData?>, of model: M) throws -> Data? {
        try container.data(for: keyPath, of: model)
    }

    /// Writes the bytes of an external value to `handle`, one chunk at a time.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    ///   - handle: Where to write, from its current offset.
    /// - Throws: What ``ModelTransaction/write(_:of:to:)-(WritableKeyPath<M,ExternalData>,_,_)`` throws.
    public func write<M: StoredModel>(
        _ keyPath: WritableKeyPath<M, ExternalData>, of model: M, to handle: FileHandle
    )
        throws
    {
        try container.write(keyPath, of: model, to: handle)
    }

    /// Writes the bytes of an optional external value to `handle`, one chunk at a time; writes nothing when it holds
    /// no value.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    ///   - handle: Where to write, from its current offset.
    /// - Returns: Whether the attribute holds a value.
    /// - Throws: What ``ModelTransaction/write(_:of:to:)-(WritableKeyPath<M,ExternalData>,_,_)`` throws.
    @discardableResult
    public func write<M: StoredModel>(
        _ keyPath: WritableKeyPath<M, ExternalData?>, of model: M, to handle: FileHandle
    ) throws -> Bool {
        try container.write(keyPath, of: model, to: handle)
    }

    /// The chunks of an external value as an async sequence, each read in a short read transaction of its own.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    /// - Returns: What ``ModelContainer/chunks(for:of:)-(WritableKeyPath<M,ExternalData>,_)`` returns.
    public func chunks<M: Model>(for keyPath: WritableKeyPath<M, ExternalData>, of model: M) -> ExternalDataChunks<M> {
        container.chunks(for: keyPath, of: model)
    }

    /// The chunks of an optional external value as an async sequence; none when it holds no value.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    /// - Returns: What ``ModelContainer/chunks(for:of:)-(WritableKeyPath<M,ExternalData?>,_)`` returns.
    public func chunks<M: Model>(for keyPath: WritableKeyPath<M, ExternalData?>, of model: M) -> ExternalDataChunks<M> {
        container.chunks(for: keyPath, of: model)
    }

    /// Streams the bytes `handle` holds into an external value of the stored model with `model`'s ID, in
    /// transactions of its own: the context's pending changes are neither saved nor affected.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model, which must be stored.
    ///   - handle: The source, read from its current offset to its end.
    /// - Returns: The model as saved, with the new value.
    /// - Throws: What ``ModelContainer/setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)`` throws.
    @discardableResult
    public func setData<M: Model>(
        for keyPath: WritableKeyPath<M, ExternalData>, of model: M, from handle: FileHandle
    ) throws -> M {
        try container.setData(for: keyPath, of: model, from: handle)
    }

    /// Streams the bytes `handle` holds into an optional external value of the stored model with `model`'s ID, in
    /// transactions of its own: the context's pending changes are neither saved nor affected.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model, which must be stored.
    ///   - handle: The source, read from its current offset to its end.
    /// - Returns: The model as saved, with the new value.
    /// - Throws: What ``ModelContainer/setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)`` throws.
    @discardableResult
    public func setData<M: Model>(
        for keyPath: WritableKeyPath<M, ExternalData?>, of model: M, from handle: FileHandle
    ) throws -> M {
        try container.setData(for: keyPath, of: model, from: handle)
    }
}
