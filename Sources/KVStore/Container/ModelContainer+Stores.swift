import Foundation

extension ModelContainer: EntityStoreDirectory {
    /// The store of the entity named `name`: one the models declare, or one of the store's that they do not.
    func store(named name: String) throws -> any AnyEntityStore {
        if let store = storesByName[name] { return store }
        guard let store = schema.withLock({ $0.catalogStores[name] }) else {
            throw KVStoreError(
                .unknownEntity, entity: name,
                message: "The entity \(name) is not part of this container; pass its model type to ModelContainer(for:)"
            )
        }
        return store
    }
}
