import Foundation

/// What a write transaction collects as it goes.
final class WriteState {
    /// Whether the transaction deleted anything, which can leave earlier references without their model.
    var hasDeletes = false
    /// Whether the transaction wrote the catalog (a save interned a field name), which advanced the store's schema
    /// generation.
    var catalogChanged = false
    /// What the transaction changes, when the container is observed.
    let changes: ChangeCollector?
    /// The copies of external values the write staged before this transaction, by copy (see
    /// ``ExternalValueCopies``).
    let stagedCopies: [ExternalValueCopy.Key: ExternalValueDescriptor]
    /// The copies of external values this transaction's saves need and did not find staged.
    var copyRequests: [ExternalValueCopy] = []
    /// The new models merged into stored ones by a unique constraint with ``UniqueConflictPolicy/update``: the new
    /// model's ID to the stored model's. References to the new IDs are redirected before the commit.
    var merges: [UUID: UUID] = [:]
    /// The author the transaction's history entry names, when the store records history.
    var author: String?

    init(changes: ChangeCollector?, stagedCopies: [ExternalValueCopy.Key: ExternalValueDescriptor] = [:]) {
        self.changes = changes
        self.stagedCopies = stagedCopies
    }

    // MARK: Unchecked storage

    /// References to check before the commit.
    ///
    /// Their storage, `uncheckedReferences`, is `@exclusivity(unchecked)`: one write transaction appends here once
    /// per save, and a run-time check of each append costs as much as the append. These `@inline(__always)`
    /// accessors are the only code that touches it.
    ///
    /// Invariant: it is safe because two accesses to it, one of them a modification, never overlap: the instance belongs to one
    /// write transaction, which runs on one thread (the type is not `Sendable`), and an access reads the array or
    /// appends to it, with no code running inside the access but the array's own. Debug builds check it: the
    /// `_modify` accessor marks its access while it is open, and an access that finds it marked traps.
    var references: [PendingReference] {
        @inline(__always) _read {
            checkNoModification()
            yield unsafe uncheckedReferences
        }
        @inline(__always) _modify {
            checkNoModification()
            #if DEBUG
                isModifyingReferences = true
                defer { isModifyingReferences = false }
            #endif
            yield unsafe &uncheckedReferences
        }
    }
    @exclusivity(unchecked) private var uncheckedReferences: [PendingReference] = []

    #if DEBUG
        /// Whether a `_modify` access to ``references`` is open.
        private var isModifyingReferences = false
    #endif

    /// In debug builds, traps if ``references`` is being modified: an access now would overlap that one.
    @inline(__always)
    private func checkNoModification() {
        #if DEBUG
            precondition(!isModifyingReferences, "Overlapping accesses to WriteState.references")
        #endif
    }
}

@available(*, unavailable)
extension WriteState: Sendable {}
