import Foundation

/// A problem the integrity check found: an error, which makes the store inconsistent, or a warning, which leaves it
/// usable.
///
/// Its ``description`` is the line `kvtool check` prints: the severity, then the message, which names the entity,
/// the record and the index or relationship concerned.
///
/// ```swift
/// for problem in try StoreInspection.check(path: path).problems where problem.severity == .error {
///     print(problem)  // error: Task 0190…: missing from index projectID (projectID = "…")
/// }
/// ```
public struct CheckProblem: Hashable, Sendable, CustomStringConvertible {
    /// How serious a problem is.
    public enum Severity: String, Hashable, Sendable, CaseIterable {
        /// The store is inconsistent: damaged, or its records, indexes and catalog disagree.
        case error
        /// Worth knowing, but allowed: a dangling reference the delete rule allows, a leftover table, a migration
        /// or an import under way, pages neither used nor free.
        case warning
    }

    /// How serious the problem is.
    public let severity: Severity
    /// The entity concerned, if any.
    public let entity: String?
    /// The record concerned, if any.
    public let id: UUID?
    /// The index, relationship, external field or table concerned, if any.
    public let part: String?
    /// The whole message, naming the entity, record and index.
    public let message: String

    /// Creates a problem.
    ///
    /// - Parameters:
    ///   - severity: How serious it is.
    ///   - entity: The entity concerned, if any.
    ///   - id: The record concerned, if any.
    ///   - part: The index, relationship, external field or table concerned, if any.
    ///   - message: The whole message.
    public init(severity: Severity, entity: String? = nil, id: UUID? = nil, part: String? = nil, message: String) {
        self.severity = severity
        self.entity = entity
        self.id = id
        self.part = part
        self.message = message
    }

    /// `error: Task 0190…: missing from index projectID (projectID = "…")`.
    public var description: String {
        "\(severity.rawValue): \(message)"
    }
}
