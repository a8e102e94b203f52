import Foundation
import KVStore

extension ModelContainer {
    /// An in-memory container for one test, with the fixtures `seed` inserts already saved.
    ///
    /// The store lives as long as the container (`ModelConfiguration(isStoredInMemoryOnly: true)`), so tests
    /// running in parallel each open their own. `seed` gets a fresh context, which is saved when `seed` returns:
    /// insert the fixtures, or leave `seed` out for an empty store.
    ///
    /// ```swift
    /// let container = try ModelContainer.testing(Project.self, Task.self) { context in
    ///     context.insert(Project(name: "Launch"))
    /// }
    /// ```
    ///
    /// An `observer` hears the seed's commit too; ``RecordingObserver/removeAll()`` forgets it.
    ///
    /// - Parameters:
    ///   - types: The model types of the container; the types their relationships reach are added, as
    ///     `ModelContainer(for:configuration:observer:)` adds them.
    ///   - observer: Hooks for the container, such as a ``RecordingObserver``.
    ///   - seed: Inserts the fixtures.
    /// - Returns: The open container, with the fixtures saved.
    /// - Throws: `KVStoreError.invalidModel` for an invalid entity description, `KVStoreError.storage` when the
    ///   store cannot be created, what `seed` throws, or what `ModelContext.save()` throws on the fixtures
    ///   (`KVStoreError.uniqueViolation`, `KVStoreError.missingReference`).
    public static func testing(
        _ types: any StoredModel.Type...,
        observer: (any ModelContainerObserver)? = nil,
        seed: (ModelContext) throws -> Void = { _ in }
    ) throws -> ModelContainer {
        let container = try ModelContainer(
            for: types, configuration: ModelConfiguration(isStoredInMemoryOnly: true), observer: observer)
        let context = ModelContext(container)
        try seed(context)
        try context.save()
        return container
    }
}
