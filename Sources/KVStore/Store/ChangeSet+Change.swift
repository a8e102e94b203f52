import Foundation

extension ChangeSet {
    /// A model of a store, named by its entity and its ID: the model whose delete made a rule change another.
    public struct ModelID: Sendable, Hashable, CustomStringConvertible {
        /// The model's entity name.
        public var entity: String
        /// The model's ID.
        public var id: UUID

        /// Names the model of `entity` with `id`.
        public init(entity: String, id: UUID) {
            self.entity = entity
            self.id = id
        }

        /// The model of type `type` with `id`.
        public init<M: StoredModel>(_ type: M.Type, id: UUID) {
            self.init(entity: M.entity.name, id: id)
        }

        /// The entity and the ID, as in `Project 0193E1F6-…`.
        public var description: String { "\(entity) \(id)" }
    }

    /// What happened to one model in a committed transaction: an element of ``ChangeSet/changes``.
    ///
    /// The static constructors build expected changes for a test from a model type:
    ///
    /// ```swift
    /// #expect(
    ///     changeSet.changes == [
    ///         .deleted(Project.self, projectID),
    ///         .cascaded(Task.self, taskID, from: Project.self, projectID),
    ///     ])
    /// ```
    public struct Change: Sendable, Hashable, CustomStringConvertible {
        /// How a model changed.
        public enum Kind: Sendable, Hashable {
            /// Saved where no model had its ID.
            case inserted
            /// Saved over the stored model with its ID.
            case updated
            /// Rewritten by a `nullify` delete rule: its reference to the deleted model was removed.
            case nullified(by: ModelID)
            /// Deleted by the transaction itself.
            case deleted
            /// Deleted by a `cascade` delete rule of the deleted model named.
            case cascaded(from: ModelID)
        }

        /// The model's entity name.
        public var entity: String
        /// The model's ID.
        public var id: UUID
        /// How it changed.
        public var kind: Kind

        /// A change of the model of `entity` with `id`.
        public init(_ kind: Kind, entity: String, id: UUID) {
            self.kind = kind
            self.entity = entity
            self.id = id
        }

        /// The model the change concerns.
        public var model: ModelID { ModelID(entity: entity, id: id) }

        /// Whether the change stored the model: an insert, an update or a rule's rewrite.
        public var isSave: Bool {
            switch kind {
            case .inserted, .updated, .nullified: true
            case .deleted, .cascaded: false
            }
        }

        /// The insert of the model of type `type` with `id`.
        public static func inserted<M: StoredModel>(_ type: M.Type, _ id: UUID) -> Change {
            Change(.inserted, entity: M.entity.name, id: id)
        }

        /// The update of the model of type `type` with `id`.
        public static func updated<M: StoredModel>(_ type: M.Type, _ id: UUID) -> Change {
            Change(.updated, entity: M.entity.name, id: id)
        }

        /// The rewrite of the model of type `type` with `id` by a `nullify` rule of the deleted model of type
        /// `deletedType` with `deletedID`.
        public static func nullified<M: Model, D: Model>(
            _ type: M.Type, _ id: UUID, by deletedType: D.Type, _ deletedID: UUID
        ) -> Change {
            Change(.nullified(by: ModelID(D.self, id: deletedID)), entity: M.entity.name, id: id)
        }

        /// The delete of the model of type `type` with `id`, asked for by the transaction.
        public static func deleted<M: StoredModel>(_ type: M.Type, _ id: UUID) -> Change {
            Change(.deleted, entity: M.entity.name, id: id)
        }

        /// The delete of the model of type `type` with `id` by a `cascade` rule of the deleted model of type
        /// `deletedType` with `deletedID`.
        public static func cascaded<M: Model, D: Model>(
            _ type: M.Type, _ id: UUID, from deletedType: D.Type, _ deletedID: UUID
        ) -> Change {
            Change(.cascaded(from: ModelID(D.self, id: deletedID)), entity: M.entity.name, id: id)
        }

        /// The change in words, as in `deleted Task 0193E1F6-… (cascade from Project 0193E1F5-…)`.
        public var description: String {
            switch kind {
            case .inserted: "inserted \(entity) \(id)"
            case .updated: "updated \(entity) \(id)"
            case .nullified(let deleted): "updated \(entity) \(id) (nullify on \(deleted))"
            case .deleted: "deleted \(entity) \(id)"
            case .cascaded(let deleted): "deleted \(entity) \(id) (cascade from \(deleted))"
            }
        }
    }
}
