/// What saving a new model does when a unique constraint finds its value held by another stored model.
///
/// The policy is part of the store's catalog, so every program that writes the store applies the same one, whether
/// it declares the constraint or not. A program that declares the constraint with another policy is refused when it
/// opens the store (``KVStoreError/incompatibleSchema``); a migration stage can change it.
public enum UniqueConflictPolicy: String, Sendable, Hashable, CaseIterable {
    /// The save throws ``KVStoreError/uniqueViolation`` and writes nothing of it. The default.
    case fail

    /// SwiftData's `@Attribute(.unique)`: an upsert. The stored model keeps its ID, and with it the models that refer
    /// to it, and takes the new model's values; the new model's ID is not stored. References to the new model's ID
    /// saved in the same transaction through declared relationships are redirected to the stored model, and
    /// ``ModelContext/save()`` says which ID survived (``SaveResult/storedID(of:)``).
    ///
    /// Only a model new to the store merges: saving a stored model with a value another model holds still throws
    /// ``KVStoreError/uniqueViolation``, since two stored identities never merge silently.
    case update
}
