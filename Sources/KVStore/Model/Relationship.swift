import Foundation

/// What deleting a model does to the models related to it through a relationship, as in Core Data and SwiftData.
///
/// The raw value is the rule's name in the store's catalog (`cascade`, `nullify`, `deny`, `noAction`), and
/// `allCases` lists the rules this version knows: a tool that reads the catalog (`kvtool check`, `kvtool schema`)
/// takes both from here, so a new rule needs no change there.
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Deletes the related models too, and theirs in turn, through any depth and safely through cycles.
    case cascade
    /// Removes the reference to the deleted model from the related models: a to-one becomes `nil`, a many-to-many
    /// array loses the ID. The default.
    case nullify
    /// Refuses the delete while related models exist: the save throws ``KVStoreError/deleteDenied`` and writes
    /// nothing.
    case deny
    /// Leaves the related models as they are; their references dangle (`kvtool check` lists them).
    case noAction
}

/// A relationship between two models, declared in an ``Entity``.
///
/// References between models are IDs, stored on one side only:
/// - to-one: a `UUID?` field (`Task.projectID`), indexed automatically;
/// - many-to-many: a `[UUID]` field (`Task.tagIDs`) with a multi-entry index;
/// - to-many: derived from the inverse to-one (or many-to-many) through its index: a project's tasks are the tasks
///   whose `projectID` is the project's ID. Nothing is duplicated, so nothing can fall out of step.
///
/// ```swift
/// struct Project: Model {
///     var id = UUID.timeOrdered()
///     var name: String
///     static let entity = Entity<Project>(relationships: [
///         .toMany("tasks", of: Task.self, inverse: \.projectID, deleteRule: .cascade)
///     ])
/// }
///
/// struct Task: Model {
///     var id = UUID.timeOrdered()
///     var title: String
///     var projectID: UUID?
///     static let entity = Entity<Task>(relationships: [
///         .toOne("project", \.projectID, to: Project.self, inverse: "tasks")
///     ])
/// }
/// ```
///
/// The delete rule belongs to the side being deleted: deleting a project applies `Project.tasks`'s rule to its
/// tasks. Declarations are checked when the container opens: an inverse that does not match is refused with a message
/// naming both sides.
public struct Relationship<M: StoredModel>: Sendable {
    /// The relationship's name, unique in its entity.
    public let name: String

    /// The delete rule applied to the related models when a model of this entity is deleted.
    public let deleteRule: DeleteRule

    /// Whether a stored ID may name a model that does not exist; otherwise saving one throws
    /// ``KVStoreError/missingReference``.
    public let allowsDangling: Bool

    /// The name of the inverse relationship on the target, when declared.
    public let inverse: String?

    let target: any StoredModel.Type
    let storage: Storage
    /// How the relationship property of a ``PersistentModel`` is reached; `nil` for a ``Model`` struct's.
    var property: RelationshipProperty<M>? = nil

    /// Where the relationship's IDs live.
    enum Storage: Sendable {
        /// In a field of this model: `UUID?` (to-one) or `[UUID]` (many-to-many). `rewrite` passes each stored ID
        /// through a function, which keeps it, replaces it, or removes it (`nil`), and returns whether any changed.
        case field(
            name: String,
            isToMany: Bool,
            index: ModelIndex<M>,
            ids: @Sendable (M) -> [UUID],
            rewrite: @Sendable (inout M, (UUID) -> UUID?) -> Bool)
        /// In the target's field of this name, found through the target's index on it.
        case inverse(field: String)
    }

    /// A to-one relationship stored in a `UUID?` field of this model.
    ///
    /// - Parameters:
    ///   - name: The relationship's name.
    ///   - keyPath: The field holding the related model's ID.
    ///   - target: The related model type.
    ///   - inverse: The name of the inverse relationship on the target, if it declares one.
    ///   - deleteRule: What deleting this model does to the related model. The default is `.nullify`.
    ///   - allowsDangling: Whether the ID may name a model that does not exist.
    public static func toOne<Target: StoredModel>(
        _ name: String,
        _ keyPath: WritableKeyPath<M, UUID?> & Sendable,
        to target: Target.Type,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        allowsDangling: Bool = false
    ) -> Self {
        Relationship(
            name: name, deleteRule: deleteRule, allowsDangling: allowsDangling, inverse: inverse, target: target,
            storage: .field(
                name: ModelIndex<M>.fieldName(of: keyPath), isToMany: false, index: .index(keyPath),
                ids: { model in model[keyPath: keyPath].map { [$0] } ?? [] },
                rewrite: { model, rewrittenID in
                    guard let id = model[keyPath: keyPath] else { return false }
                    let new = rewrittenID(id)
                    guard new != id else { return false }
                    model[keyPath: keyPath] = new
                    return true
                }))
    }

    /// A many-to-many relationship stored in a `[UUID]` field of this model.
    ///
    /// - Parameters:
    ///   - name: The relationship's name.
    ///   - keyPath: The field holding the related models' IDs.
    ///   - target: The related model type.
    ///   - inverse: The name of the inverse relationship on the target, if it declares one.
    ///   - deleteRule: What deleting this model does to the related models. The default is `.nullify`.
    ///   - allowsDangling: Whether the IDs may name models that do not exist.
    public static func toMany<Target: StoredModel>(
        _ name: String,
        _ keyPath: WritableKeyPath<M, [UUID]> & Sendable,
        to target: Target.Type,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        allowsDangling: Bool = false
    ) -> Self {
        Relationship(
            name: name, deleteRule: deleteRule, allowsDangling: allowsDangling, inverse: inverse, target: target,
            storage: .field(
                name: ModelIndex<M>.fieldName(of: keyPath), isToMany: true, index: .index(keyPath),
                ids: { model in model[keyPath: keyPath] },
                rewrite: { model, rewrittenID in
                    let new = model[keyPath: keyPath].compactMap(rewrittenID)
                    guard new != model[keyPath: keyPath] else { return false }
                    model[keyPath: keyPath] = new
                    return true
                }))
    }

    /// A to-many relationship derived from the target's to-one field that points back at this model.
    ///
    /// - Parameters:
    ///   - name: The relationship's name.
    ///   - target: The related model type.
    ///   - inverse: The target's `UUID?` field that holds this model's ID.
    ///   - deleteRule: What deleting this model does to the related models. The default is `.nullify`.
    public static func toMany<Target: StoredModel>(
        _ name: String,
        of target: Target.Type,
        inverse: KeyPath<Target, UUID?> & Sendable,
        deleteRule: DeleteRule = .nullify
    ) -> Self {
        Relationship(
            name: name, deleteRule: deleteRule, allowsDangling: false, inverse: nil, target: target,
            storage: .inverse(field: ModelIndex<Target>.fieldName(of: inverse)))
    }

    /// A to-many relationship derived from the target's many-to-many field that holds this model's ID.
    ///
    /// - Parameters:
    ///   - name: The relationship's name.
    ///   - target: The related model type.
    ///   - inverse: The target's `[UUID]` field that holds this model's ID.
    ///   - deleteRule: What deleting this model does to the related models. The default is `.nullify`.
    public static func toMany<Target: StoredModel>(
        _ name: String,
        of target: Target.Type,
        inverse: KeyPath<Target, [UUID]> & Sendable,
        deleteRule: DeleteRule = .nullify
    ) -> Self {
        Relationship(
            name: name, deleteRule: deleteRule, allowsDangling: false, inverse: nil, target: target,
            storage: .inverse(field: ModelIndex<Target>.fieldName(of: inverse)))
    }

    /// The name of the field that holds this side's IDs, or `nil` for a derived side.
    var field: String? {
        if case .field(let name, _, _, _, _) = storage { return name }
        return nil
    }

    /// The name of the target's field that holds this model's ID, for a derived side.
    var inverseField: String? {
        if case .inverse(let field) = storage { return field }
        return nil
    }
}
