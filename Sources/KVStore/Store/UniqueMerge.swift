import Foundation

/// Thrown by the write of a new model whose value, under a unique index that merges on conflict
/// (``UniqueConflictPolicy/update``), another stored model holds: nothing of the model's record or index entries was
/// written, and ``EntityStore/save(_:in:writes:)`` saves it again as that model.
struct UniqueMerge: Error {
    /// The ID of the stored model that holds the value.
    let holder: UUID
    /// The unique index.
    let index: String

    /// The merge into the holder whose record key is `owner`, or `nil` when `owner` is no record key (a value held
    /// by no single model), which is then a plain violation.
    init?(owner: [UInt8], index: String) {
        guard owner.count == 16 else { return nil }
        self.holder = owner.withBorrowedBytes { UUID(bytes: $0) }
        self.index = index
    }
}
