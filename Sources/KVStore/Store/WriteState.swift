import Foundation

/// What a write transaction collects as it goes.
final class WriteState {
    /// References to check before the commit.
    ///
    /// `@exclusivity(unchecked)`: one write transaction, on one thread, appends here once per save, and a run-time
    /// check of each append costs as much as the append; no code reads the list while appending to it.
    @exclusivity(unchecked) var references: [PendingReference] = []
    /// Whether the transaction deleted anything, which can leave earlier references without their model.
    var hasDeletes = false
    /// Whether the transaction wrote the catalog (a save interned a field name), which advanced the store's schema
    /// generation.
    var catalogChanged = false
    /// What the transaction changes, when the container is observed.
    let changes: ChangeCollector?

    init(changes: ChangeCollector?) {
        self.changes = changes
    }
}
