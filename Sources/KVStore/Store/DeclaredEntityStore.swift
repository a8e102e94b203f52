import LMDB

/// The entities a container declares, which follow the catalog.
protocol DeclaredEntityStore: AnyEntityStore {
    /// The relationships the model declares.
    var relationships: [RelationshipInfo] { get }
    /// The names of the indexes the model declares.
    var declaredIndexNames: [String] { get }
    func didCommit(transaction: Int)
    /// Forgets what an earlier write transaction that did not commit wrote to the catalog.
    func didBeginWrite()
    /// Extends the field table from the catalog, for a read.
    func refreshFields(from stored: FieldTable, isWriting: Bool)
    /// Takes the catalog entry and the derived indexes, for writes.
    func reload(_ entry: EntityCatalog, derivedIndexes: [DerivedIndex])
}

extension EntityStore: DeclaredEntityStore {
    var declaredIndexNames: [String] { indexes.map(\.description.name) }
}
