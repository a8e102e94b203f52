import Foundation

/// What a ``ModelContext/save()`` did beyond writing its models as they were given: which new models merged into
/// stored ones under a unique constraint with ``UniqueConflictPolicy/update``.
///
/// ```swift
/// let contact = Contact(email: "ada@example.com", name: "Ada Lovelace")
/// context.insert(contact)
/// let result = try context.save()
/// let id = result.storedID(of: contact.id)  // the stored contact's ID when one had that email
/// ```
public struct SaveResult: Sendable, Hashable {
    /// The inserted models that merged into stored ones: each inserted ID to the ID of the stored model that took its
    /// values. Empty when every model was saved under its own ID.
    public let mergedIDs: [UUID: UUID]

    /// The ID that the values of the model inserted as `id` are stored under: the stored model's it merged into, or
    /// `id` itself.
    public func storedID(of id: UUID) -> UUID {
        mergedIDs[id] ?? id
    }
}
