import Foundation

extension ModelContainer {
    /// The bytes of an external value of the stored model with `model`'s ID.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    /// - Returns: The value's bytes, all in memory.
    /// - Throws: What ``ModelTransaction/data(for:of:)-(WritableKeyPath<M,ExternalData>,_)`` throws.
    public func data<M: StoredModel>(for keyPath: WritableKeyPath<M, ExternalData>, of model: M) throws -> Data {
        try read { txn in try txn.data(for: keyPath, of: model) }
    }

    /// The bytes of an optional external value of the stored model with `model`'s ID, or `nil` when it holds none.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    /// - Returns: The value's bytes, all in memory, or `nil`.
    /// - Throws: What ``ModelTransaction/data(for:of:)-(WritableKeyPath<M,ExternalData>,_)`` throws.
    public func data<M: StoredModel>(for keyPath: WritableKeyPath<M, ExternalData?>, of model: M) throws -> Data? {
        try read { txn in try txn.data(for: keyPath, of: model) }
    }

    /// Writes the bytes of an external value to `handle`, one chunk at a time, in one read transaction.
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
        try read { txn in try txn.write(keyPath, of: model, to: handle) }
    }

    /// Writes the bytes of an optional external value to `handle`, one chunk at a time, in one read transaction;
    /// writes nothing when it holds no value.
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
        try read { txn in try txn.write(keyPath, of: model, to: handle) }
    }

    /// The chunks of an external value as an async sequence, each read in a short read transaction of its own.
    ///
    /// The sequence reads the value the stored model holds when the first chunk is read; if that value is replaced
    /// or its model deleted before the last chunk, the next chunk throws ``KVStoreError/missingExternalData``.
    ///
    /// ```swift
    /// for try await chunk in container.chunks(for: \.image, of: photo) {
    ///     try output.write(contentsOf: chunk)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    /// - Returns: The chunks, in order.
    public func chunks<M: Model>(for keyPath: WritableKeyPath<M, ExternalData>, of model: M) -> ExternalDataChunks<M> {
        ExternalDataChunks(container: self, keyPath: keyPath, model: model)
    }

    /// The chunks of an optional external value as an async sequence, each read in a short read transaction of its
    /// own; none when it holds no value.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model.
    /// - Returns: The chunks, in order.
    public func chunks<M: Model>(for keyPath: WritableKeyPath<M, ExternalData?>, of model: M) -> ExternalDataChunks<M> {
        ExternalDataChunks(container: self, keyPath: keyPath, model: model)
    }

    /// Streams the bytes `handle` holds, from its current offset to its end, into an external value of the stored
    /// model with `model`'s ID, replacing its value.
    ///
    /// The value is written in batches of chunks, one write transaction per 16 MiB, so a value larger than memory
    /// needs only a batch's memory; the model gets the value in a last transaction. Until then readers see the old
    /// value; if the process dies part-way, the next open of the store deletes the chunks written.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model, which must be stored.
    ///   - handle: The source.
    /// - Returns: The model as saved, with the new value.
    /// - Throws: ``KVStoreError/modelNotFound`` when the model is not stored (or is deleted meanwhile),
    ///   ``KVStoreError/invalidModel`` when the attribute is not external, or what reading `handle` throws; nothing of
    ///   the value is kept then.
    @discardableResult
    public func setData<M: Model>(
        for keyPath: WritableKeyPath<M, ExternalData>, of model: M, from handle: FileHandle
    ) throws -> M {
        try setExternalData(for: keyPath, of: model, from: handle)
    }

    /// Streams the bytes `handle` holds, from its current offset to its end, into an optional external value of the
    /// stored model with `model`'s ID, replacing its value or giving it one.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model, which must be stored.
    ///   - handle: The source.
    /// - Returns: The model as saved, with the new value.
    /// - Throws: What ``setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)`` throws.
    @discardableResult
    public func setData<M: Model>(
        for keyPath: WritableKeyPath<M, ExternalData?>, of model: M, from handle: FileHandle
    ) throws -> M {
        try setExternalData(for: keyPath, of: model, from: handle)
    }

    private func setExternalData<M: Model>(for keyPath: AnyKeyPath, of model: M, from handle: FileHandle) throws -> M {
        let writer = try StreamedValueWriter<M>(container: self, keyPath: keyPath, owner: model.id)
        let readSize = 4 * ExternalValueTable.chunkSize
        return try writer.run {
            while let data = try handle.read(upToCount: readSize), !data.isEmpty {
                try writer.append(data)
            }
        }
    }

    /// Streams the file at `url` into an external value of the stored model with `model`'s ID.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model, which must be stored.
    ///   - url: The file to read.
    /// - Returns: The model as saved, with the new value.
    /// - Throws: What ``setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)`` throws, or the error opening the file.
    @discardableResult
    public func setData<M: Model>(
        for keyPath: WritableKeyPath<M, ExternalData>, of model: M, contentsOf url: URL
    ) throws -> M {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return try setData(for: keyPath, of: model, from: handle)
    }

    /// Streams the file at `url` into an optional external value of the stored model with `model`'s ID.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model, which must be stored.
    ///   - url: The file to read.
    /// - Returns: The model as saved, with the new value.
    /// - Throws: What ``setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)`` throws, or the error
    ///   opening the file.
    @discardableResult
    public func setData<M: Model>(
        for keyPath: WritableKeyPath<M, ExternalData?>, of model: M, contentsOf url: URL
    ) throws -> M {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return try setData(for: keyPath, of: model, from: handle)
    }

    /// Streams an async sequence of chunks into an external value of the stored model with `model`'s ID.
    ///
    /// The chunks may have any sizes; they are regrouped into the store's chunks, and every 16 MiB is written in a
    /// write transaction of its own on the container's writer queue. If the sequence throws, nothing of the value
    /// is kept and the model keeps its old value.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute, declared in the entity's `externalStorage`.
    ///   - model: The model, which must be stored.
    ///   - chunks: The source.
    /// - Returns: The model as saved, with the new value.
    /// - Throws: What ``setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)`` throws, or what the sequence throws.
    @discardableResult
    public func setData<M: Model, Chunks: AsyncSequence>(
        for keyPath: WritableKeyPath<M, ExternalData>, of model: M, from chunks: Chunks
    ) async throws -> M where Chunks.Element == Data {
        try await setExternalData(for: keyPath, of: model, from: chunks)
    }

    /// Streams an async sequence of chunks into an optional external value of the stored model with `model`'s ID.
    ///
    /// - Parameters:
    ///   - keyPath: The optional attribute, declared in the entity's `externalStorage`.
    ///   - model: The model, which must be stored.
    ///   - chunks: The source.
    /// - Returns: The model as saved, with the new value.
    /// - Throws: What ``setData(for:of:from:)-(WritableKeyPath<M,ExternalData>,_,FileHandle)`` throws, or what the
    ///   sequence throws.
    @discardableResult
    public func setData<M: Model, Chunks: AsyncSequence>(
        for keyPath: WritableKeyPath<M, ExternalData?>, of model: M, from chunks: Chunks
    ) async throws -> M where Chunks.Element == Data {
        try await setExternalData(for: keyPath, of: model, from: chunks)
    }

    private func setExternalData<M: Model, Chunks: AsyncSequence>(
        for keyPath: AnyKeyPath, of model: M, from chunks: Chunks
    ) async throws -> M where Chunks.Element == Data {
        let writer = try StreamedValueWriter<M>(container: self, keyPath: keyPath, owner: model.id)
        return try await writer.run {
            for try await chunk in chunks { try await writer.append(chunk) }
        }
    }
}

/// The chunks of an external value, read one at a time: see
/// ``ModelContainer/chunks(for:of:)-(WritableKeyPath<M,ExternalData>,_)``.
public struct ExternalDataChunks<M: Model>: AsyncSequence {
    /// A chunk's bytes.
    public typealias Element = Data

    let container: ModelContainer
    let keyPath: AnyKeyPath
    let model: M

    /// Makes an iterator that reads the chunks from the first.
    public func makeAsyncIterator() -> Iterator {
        Iterator(chunks: self)
    }

    /// Reads the next chunk in a read transaction of its own.
    public struct Iterator: AsyncIteratorProtocol {
        let chunks: ExternalDataChunks
        /// The descriptor of the value being read, once the first chunk was.
        private var descriptor: ExternalValueDescriptor?
        private var next = 0
        private var isDone = false

        init(chunks: ExternalDataChunks) {
            self.chunks = chunks
        }

        /// The next chunk, or `nil` after the last.
        ///
        /// - Throws: ``KVStoreError/modelNotFound``, ``KVStoreError/missingExternalData`` when the value was replaced
        ///   or deleted since the first chunk, ``KVStoreError/invalidModel`` when the attribute is not external.
        public mutating func next() async throws -> Data? {
            if isDone { return nil }
            let store = try chunks.container.store(for: M.self)
            let (attribute, table) = try store.externalAttribute(chunks.keyPath)
            let (index, model, keyPath, known) = (next, chunks.model, chunks.keyPath, descriptor)
            // A `nil` descriptor stands for a value not saved yet, of a model not stored: its bytes are one chunk.
            let (descriptor, chunk) = try chunks.container.performRead {
                txn -> (ExternalValueDescriptor?, Data?) in
                let descriptor: ExternalValueDescriptor
                if let known {
                    descriptor = known
                } else {
                    switch try store.valueToRead(keyPath, of: model, in: txn.transaction.pointee) {
                    case .none:
                        return (nil, nil)
                    case .pending(let data):
                        return (nil, data)
                    case .stored(_, let stored):
                        descriptor = stored
                    }
                }
                guard index < descriptor.chunkCount else { return (descriptor, nil) }
                let chunk = try table.withChunk(
                    index, of: descriptor, owner: model.id, field: (attribute.id, attribute.name),
                    in: txn.transaction.pointee
                ) { Data($0) }
                return (descriptor, chunk)
            }
            guard let descriptor else {
                isDone = true
                return chunk?.isEmpty == false ? chunk : nil
            }
            self.descriptor = descriptor
            guard let chunk else {
                isDone = true
                return nil
            }
            next += 1
            return chunk
        }
    }
}
