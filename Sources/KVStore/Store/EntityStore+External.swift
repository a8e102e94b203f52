import Foundation
import LMDB

extension EntityStore {
    /// The external attribute at `keyPath`.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` when the entity does not declare it external.
    func externalAttribute(
        _ keyPath: WritableKeyPath<M, ExternalData>
    ) throws -> (StoredExternalAttribute, ExternalValueTable) {
        guard let table = externalTable, let attribute = externalAttributes.first(where: { $0.keyPath == keyPath })
        else {
            throw KVStoreError(
                .invalidModel, entity: name,
                message: "\(keyPath) is not declared external; list it in the externalStorage of \(name)'s entity")
        }
        return (attribute, table)
    }

    /// Writes the external values of `model` that are not stored yet, deletes the values they replace and those of
    /// fields the model no longer declares external, and returns the model with descriptors in their place, ready
    /// to encode.
    ///
    /// A value fetched and left unchanged is not written again.
    ///
    /// - Throws: ``KVStoreError/missingExternalData`` when a stored value the model carries is not this model's (it
    ///   was taken from another model, or replaced since it was fetched).
    func storeExternalValues(of model: M, in txn: borrowing Transaction) throws -> M {
        guard let table = externalTable else { return model }
        var model = model
        let old = try self.model(for: model.id, in: txn, reader: reader)
        for attribute in externalAttributes {
            let oldDescriptor = old?[keyPath: attribute.keyPath].descriptor
            let descriptor: ExternalValueDescriptor
            switch model[keyPath: attribute.keyPath].content {
            case .pending(let data):
                descriptor = try table.write(data, owner: model.id, field: attribute.id, in: txn)
                model[keyPath: attribute.keyPath] = ExternalData(stored: descriptor)
            case .stored(let stored):
                if stored == oldDescriptor { continue }
                try table.verify(stored, owner: model.id, field: (attribute.id, attribute.name), in: txn)
                descriptor = stored
            }
            if let oldDescriptor, oldDescriptor.valueID != descriptor.valueID {
                try table.deleteValue(owner: model.id, field: attribute.id, value: oldDescriptor.valueID, in: txn)
            }
        }
        // The new record no longer holds the descriptors of fields the model stopped declaring external.
        for field in retiredExternalFields where old != nil {
            try table.deleteField(owner: model.id, field: field.fieldID, in: txn)
        }
        return model
    }

    /// The descriptor of the stored value of `attribute` of the model `id`.
    ///
    /// - Throws: ``KVStoreError/modelNotFound`` when no model has `id`.
    func storedDescriptor(
        of attribute: StoredExternalAttribute, id: UUID, in txn: borrowing Transaction
    ) throws -> ExternalValueDescriptor {
        guard let stored = try model(for: id, in: txn, reader: reader) else {
            throw KVStoreError(
                .modelNotFound, entity: name, id: id, field: attribute.name,
                message: "Cannot read \(name).\(attribute.name) of \(id): no \(name) has this ID")
        }
        guard let descriptor = stored[keyPath: attribute.keyPath].descriptor else {
            // A decoded record always holds a descriptor; this guards a model type whose decoding replaces it.
            throw KVStoreError(
                .corruptRecord, entity: name, id: id, field: attribute.name,
                message: "The stored \(name) \(id) holds no descriptor for its external \(attribute.name)")
        }
        return descriptor
    }

    /// The value to read for the attribute at `keyPath` of `model`: the stored model's, or, when the model is not
    /// stored and its value not saved yet, the bytes it holds.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` when the attribute is not external, ``KVStoreError/modelNotFound``
    ///   when the model is not stored and its value is a stored one (its model was deleted).
    func valueToRead(
        _ keyPath: WritableKeyPath<M, ExternalData>, of model: M, in txn: borrowing Transaction
    ) throws -> ValueToRead {
        let (attribute, _) = try externalAttribute(keyPath)
        if case .pending(let data) = model[keyPath: keyPath].content, try !exists(model.id, in: txn) {
            return .pending(data)
        }
        return .stored(attribute, try storedDescriptor(of: attribute, id: model.id, in: txn))
    }

    /// What ``valueToRead(_:of:in:)`` finds.
    enum ValueToRead {
        case pending(Data)
        case stored(StoredExternalAttribute, ExternalValueDescriptor)
    }

    /// Calls `body` with each chunk of a stored value, in order.
    ///
    /// - Warning: The bytes are LMDB's memory map, valid only inside `body`.
    func forEachChunk(
        of attribute: StoredExternalAttribute,
        descriptor: ExternalValueDescriptor,
        id: UUID,
        in txn: borrowing Transaction,
        _ body: (BorrowedBytes) throws -> Void
    ) throws {
        let (_, table) = try externalAttribute(attribute.keyPath)
        for index in 0..<descriptor.chunkCount {
            try table.withChunk(index, of: descriptor, owner: id, field: (attribute.id, attribute.name), in: txn, body)
        }
    }
}
