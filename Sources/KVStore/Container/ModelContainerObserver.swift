import Foundation

/// Hooks for logging and metrics on everything a container does, in the manner of BLoC's global observer.
///
/// Pass one to ``ModelContainer/init(for:configuration:observer:)-(StoredModel....,_,_)``. Every method has an
/// empty default, so implement only what you need. The hooks run on the thread that did the work, after it: keep them
/// fast, and do not write to the same container from them. A container without an observer collects nothing for it.
///
/// ```swift
/// struct Metrics: ModelContainerObserver {
///     func container(_ container: ModelContainer, didCommit changes: ChangeSet, duration: Duration) {
///         print("committed \(changes.transactionID) in \(duration)")
///     }
/// }
/// ```
public protocol ModelContainerObserver: Sendable {
    /// The container opened its store.
    func containerDidOpen(_ container: ModelContainer)

    /// The container closed its store.
    func containerDidClose(_ container: ModelContainer)

    /// A write transaction committed these changes; `duration` runs from its start to the commit.
    func container(_ container: ModelContainer, didCommit changes: ChangeSet, duration: Duration)

    /// An operation failed. `entity` is the entity concerned, when known; `operation` is `read` or `write`.
    func container(_ container: ModelContainer, didFail error: any Error, operation: String, entity: String?)
}

extension ModelContainerObserver {
    /// Does nothing.
    public func containerDidOpen(_ container: ModelContainer) {}

    /// Does nothing.
    public func containerDidClose(_ container: ModelContainer) {}

    /// Does nothing.
    public func container(_ container: ModelContainer, didCommit changes: ChangeSet, duration: Duration) {}

    /// Does nothing.
    public func container(_ container: ModelContainer, didFail error: any Error, operation: String, entity: String?) {}
}
