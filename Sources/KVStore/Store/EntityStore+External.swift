import Foundation
import LMDB

extension EntityStore {
    /// The external attribute at `keyPath`, of type ``ExternalData`` or `ExternalData?`.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` when the entity does not declare it external.
    func externalAttribute(_ keyPath: AnyKeyPath) throws -> (StoredExternalAttribute, ExternalValueTable) {
        guard let table = externalTable, let attribute = externalAttributes.first(where: { $0.keyPath == keyPath })
        else {
            throw KVStoreError(
                .invalidModel, entity: name,
                message: "\(keyPath) is not declared external; list it in the externalStorage of \(name)'s entity")
        }
        return (attribute, table)
    }

    /// Where the chunks of the values of `attribute` of the model `owner` are, in this container.
    func origin(of attribute: StoredExternalAttribute, owner: UUID) -> ExternalValueOrigin {
        ExternalValueOrigin(store: self, entity: name, owner: owner, field: attribute.id, fieldName: attribute.name)
    }

    /// `model` with each stored external value marked as this model's own, as a fetch returns it: assigned to another
    /// model, such a value is copied when that model is saved.
    func withOrigins(_ model: M) -> M {
        guard externalTable != nil else { return model }
        var model = model
        for attribute in externalAttributes {
            guard let value = attribute.value(in: model), value.isStored else { continue }
            attribute.set(value.withOrigin(origin(of: attribute, owner: model.id)), in: &model)
        }
        return model
    }

    /// Writes the external values of `model` that are not stored yet, copies those it was given from other models,
    /// deletes the values they replace (and those set to `nil`) and those of fields the model no longer declares
    /// external, and returns the model with descriptors in their place, ready to encode.
    ///
    /// A value fetched and left unchanged is not written again. A value of another model is copied from chunks staged
    /// before this transaction (see ``ExternalValueCopies``): when they are not staged yet, the copy is requested in
    /// `writes` and ``ExternalCopiesNeeded`` thrown, so that the write stages it and runs again.
    ///
    /// - Throws: ``KVStoreError/missingExternalData`` when a stored value the model carries is not this model's and
    ///   comes from no model of this store (it was decoded apart from a store, or read from another one), or
    ///   ``ExternalCopiesNeeded``.
    func storeExternalValues(of model: M, in txn: borrowing Transaction, writes: WriteState?) throws -> M {
        guard let table = externalTable else { return model }
        var model = try writableCopy(of: model)
        let old = try self.model(for: model.id, in: txn, reader: reader)
        for attribute in externalAttributes {
            let oldDescriptor = old.flatMap { attribute.value(in: $0)?.descriptor }
            let descriptor: ExternalValueDescriptor?
            switch attribute.value(in: model)?.content {
            case nil:
                descriptor = nil
            case .pending(let data):
                let written = try table.write(data, owner: model.id, field: attribute.id, in: txn)
                attribute.set(ExternalData(stored: written), in: &model)
                descriptor = written
            case .stored(let stored, let origin):
                if let origin, origin != self.origin(of: attribute, owner: model.id) {
                    let copy = try ExternalValueCopy(
                        stored, from: origin, into: table, owner: model.id, field: (attribute.id, attribute.name))
                    let copied = try copy.copied(in: txn, writes: writes)
                    attribute.set(ExternalData(stored: copied), in: &model)
                    descriptor = copied
                } else {
                    if stored == oldDescriptor { continue }
                    try table.verify(stored, owner: model.id, field: (attribute.id, attribute.name), in: txn)
                    descriptor = stored
                }
            }
            if let oldDescriptor, oldDescriptor.valueID != descriptor?.valueID {
                try table.deleteValue(owner: model.id, field: attribute.id, value: oldDescriptor.valueID, in: txn)
            }
        }
        // The new record no longer holds the descriptors of fields the model stopped declaring external.
        for field in retiredExternalFields where old != nil {
            try table.deleteField(owner: model.id, field: field.fieldID, in: txn)
        }
        return model
    }

    /// The descriptor of the stored value of `attribute` of the model `id`; `nil` when an optional attribute holds
    /// no value.
    ///
    /// - Throws: ``KVStoreError/modelNotFound`` when no model has `id`.
    func storedDescriptor(
        of attribute: StoredExternalAttribute, id: UUID, in txn: borrowing Transaction
    ) throws -> ExternalValueDescriptor? {
        guard let stored = try model(for: id, in: txn, reader: reader) else {
            throw KVStoreError(
                .modelNotFound, entity: name, id: id, field: attribute.name,
                message: "Cannot read \(name).\(attribute.name) of \(id): no \(name) has this ID")
        }
        guard let value = attribute.value(in: stored) else { return nil }
        guard let descriptor = value.descriptor else {
            // A decoded record always holds a descriptor; this guards a model type whose decoding replaces it.
            throw KVStoreError(
                .corruptRecord, entity: name, id: id, field: attribute.name,
                message: "The stored \(name) \(id) holds no descriptor for its external \(attribute.name)")
        }
        return descriptor
    }

    /// The value to read for the attribute at `keyPath` of `model`: the stored model's, or, when the model is not
    /// stored and its value not saved yet (or `nil`), the value it holds.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` when the attribute is not external, ``KVStoreError/modelNotFound``
    ///   when the model is not stored and its value is a stored one (its model was deleted).
    func valueToRead(_ keyPath: AnyKeyPath, of model: M, in txn: borrowing Transaction) throws -> ValueToRead {
        let (attribute, _) = try externalAttribute(keyPath)
        let value = attribute.value(in: model)
        if value?.isStored != true, try !exists(model.id, in: txn) {
            guard case .pending(let data) = value?.content else { return .none }
            return .pending(data)
        }
        guard let descriptor = try storedDescriptor(of: attribute, id: model.id, in: txn) else { return .none }
        return .stored(attribute, descriptor)
    }

    /// What ``valueToRead(_:of:in:)`` finds.
    enum ValueToRead {
        /// An optional attribute that holds no value.
        case none
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
