import Foundation

/// How the relationship property of a ``PersistentModel`` is reached: its kind, and its shared state in a model.
struct RelationshipProperty<M: StoredModel>: Sendable {
    enum Kind: Sendable {
        /// A ``ToOne`` property, which stores the related model's ID.
        case toOne
        /// A ``ToMany`` property, derived from the other side's field.
        case toMany
        /// A ``ManyToMany`` property, which stores the related models' IDs.
        case manyToMany
    }

    let kind: Kind
    /// The property's wrapper type, which the class's stored property `_<name>` has.
    let wrapper: Any.Type
    /// The property's shared state in a model.
    let relatedObjects: @Sendable (M) -> RelatedObjects
}

/// The relationships of ``PersistentModel`` classes, declared with their names and relationship properties
/// (`"project", \.$project`). The name is the property's: its field in the record is the property's coding key, and
/// the container checks at open that the class has a relationship property of that name and type (key paths to
/// relationship properties do not carry their names).
extension Relationship where M: PersistentModel {
    /// A to-one relationship stored in a ``ToOne`` property: SwiftData's `var project: Project?`.
    ///
    /// ```swift
    /// static let entity = Entity<Task>(relationships: [.toOne("project", \.$project, inverse: "tasks")])
    /// ```
    ///
    /// - Parameters:
    ///   - name: The property's name (`project`).
    ///   - property: The relationship property, as its projected value (`\.$project`).
    ///   - inverse: The name of the inverse relationship on the target, if it declares one.
    ///   - deleteRule: What deleting this model does to the related model. The default is `.nullify`.
    ///   - allowsDangling: Whether the ID may name a model that does not exist.
    public static func toOne<Target: PersistentModel>(
        _ name: String,
        _ property: KeyPath<M, ToOne<Target>> & Sendable,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        allowsDangling: Bool = false
    ) -> Self {
        stored(
            name, isToMany: false, target: Target.self, inverse: inverse, deleteRule: deleteRule,
            allowsDangling: allowsDangling,
            property: RelationshipProperty(kind: .toOne, wrapper: ToOne<Target>.self) { $0[keyPath: property].related })
    }

    /// A many-to-many relationship stored in a ``ManyToMany`` property: SwiftData's
    /// `@Relationship(inverse: \Tag.tasks) var tags: [Tag]`, on the side that stores the IDs.
    ///
    /// - Parameters:
    ///   - name: The property's name (`tags`).
    ///   - property: The relationship property, as its projected value (`\.$tags`).
    ///   - inverse: The name of the inverse relationship on the target, if it declares one.
    ///   - deleteRule: What deleting this model does to the related models. The default is `.nullify`.
    ///   - allowsDangling: Whether the IDs may name models that do not exist.
    public static func manyToMany<Target: PersistentModel>(
        _ name: String,
        _ property: KeyPath<M, ManyToMany<Target>> & Sendable,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        allowsDangling: Bool = false
    ) -> Self {
        stored(
            name, isToMany: true, target: Target.self, inverse: inverse, deleteRule: deleteRule,
            allowsDangling: allowsDangling,
            property: RelationshipProperty(kind: .manyToMany, wrapper: ManyToMany<Target>.self) {
                $0[keyPath: property].related
            })
    }

    /// A to-many relationship in a ``ToMany`` property, derived from the target's ``ToOne`` or ``ManyToMany``
    /// property that holds this model: SwiftData's
    /// `@Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: [Task]`.
    ///
    /// ```swift
    /// static let entity = Entity<Project>(relationships: [
    ///     .toMany("tasks", \.$tasks, inverse: "project", deleteRule: .cascade)
    /// ])
    /// ```
    ///
    /// - Parameters:
    ///   - name: The property's name (`tasks`).
    ///   - property: The relationship property, as its projected value (`\.$tasks`).
    ///   - inverse: The name of the target's relationship property that holds this model (`project`).
    ///   - deleteRule: What deleting this model does to the related models. The default is `.nullify`.
    public static func toMany<Target: PersistentModel>(
        _ name: String,
        _ property: KeyPath<M, ToMany<Target>> & Sendable,
        inverse: String,
        deleteRule: DeleteRule = .nullify
    ) -> Self {
        Relationship(
            name: name, deleteRule: deleteRule, allowsDangling: false, inverse: nil, target: Target.self,
            storage: .inverse(field: inverse),
            property: RelationshipProperty(kind: .toMany, wrapper: ToMany<Target>.self) {
                $0[keyPath: property].related
            })
    }

    private static func stored<Target: PersistentModel>(
        _ name: String, isToMany: Bool, target: Target.Type, inverse: String?, deleteRule: DeleteRule,
        allowsDangling: Bool, property: RelationshipProperty<M>
    ) -> Self {
        let stateOf = property.relatedObjects
        return Relationship(
            name: name, deleteRule: deleteRule, allowsDangling: allowsDangling, inverse: inverse, target: target,
            storage: .field(
                name: name, isToMany: isToMany,
                index: .references(name, isToMany: isToMany) { stateOf($0).ids },
                ids: { stateOf($0).ids },
                rewrite: { model, rewrittenID in
                    let state = stateOf(model)
                    let rewritten = state.ids.compactMap(rewrittenID)
                    guard rewritten != state.ids else { return false }
                    state.ids = rewritten
                    state.objects = nil
                    return true
                }),
            property: property)
    }
}

extension Entity where M: PersistentModel {
    /// The relationship whose property in `model` has the shared state `related`.
    func relationship(of model: M, sharing related: RelatedObjects) -> Relationship<M>? {
        relationships.first { $0.property?.relatedObjects(model) === related }
    }
}
