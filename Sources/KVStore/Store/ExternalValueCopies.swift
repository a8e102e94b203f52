import Foundation
import LMDB

/// An entity store whose models may own external values, as a value's origin names it.
protocol ExternalValueSource: AnyEntityStore {
    /// The entity's chunk and staging tables, if it has external values.
    var externalTable: ExternalValueTable? { get }
}

extension EntityStore: ExternalValueSource {}

/// A stored external value assigned to a field of another model (or to another field of its own), to copy into the
/// field's chunks when that model is saved.
///
/// A value's chunks are keyed by their owner, so a model cannot share another's: the save copies them under a value ID
/// of its own. The copy is streamed like a streamed write (``ExternalValueCopies``), a batch of chunks per write
/// transaction, before the transaction of the save; the save then gives it to the model.
struct ExternalValueCopy: Sendable {
    /// The entity store of the model that owns the value.
    let source: any ExternalValueSource
    let sourceTable: ExternalValueTable
    let sourceOwner: UUID
    let sourceField: (id: UInt32, name: String)
    let descriptor: ExternalValueDescriptor
    let target: ExternalValueTable
    let owner: UUID
    let field: (id: UInt32, name: String)

    /// What tells one copy from another: the value and where it goes.
    struct Key: Hashable, Sendable {
        let source: ObjectIdentifier
        let sourceOwner: UUID
        let sourceField: UInt32
        let value: UUID
        let target: ObjectIdentifier
        let owner: UUID
        let field: UInt32
    }

    var key: Key {
        Key(
            source: ObjectIdentifier(sourceTable), sourceOwner: sourceOwner, sourceField: sourceField.id,
            value: descriptor.valueID, target: ObjectIdentifier(target), owner: owner, field: field.id)
    }

    /// A copy of the value `descriptor`, whose chunks `origin` names, into `field` of the model `owner`, whose chunks
    /// are in `target`.
    ///
    /// - Throws: ``KVStoreError/missingExternalData`` when the value was read from another store.
    init(
        _ descriptor: ExternalValueDescriptor, from origin: ExternalValueOrigin, into target: ExternalValueTable,
        owner: UUID, field: (id: UInt32, name: String)
    ) throws {
        guard let source = origin.store as? any ExternalValueSource, let sourceTable = source.externalTable,
            sourceTable.isInSameStore(as: target)
        else {
            throw KVStoreError(
                .missingExternalData, entity: target.entity, id: owner, field: field.name,
                message: "\(target.entity).\(field.name) of \(owner) was given the value of \(origin.entity)."
                    + "\(origin.fieldName) of \(origin.owner) read from another store, whose chunks this store does "
                    + "not have; nothing of this save was written. Copy the bytes instead: "
                    + "ExternalData(try otherContainer.data(for:of:)), or stream them with setData(for:of:from:)")
        }
        self.source = source
        self.sourceTable = sourceTable
        self.sourceOwner = origin.owner
        self.sourceField = (origin.field, origin.fieldName)
        self.descriptor = descriptor
        self.target = target
        self.owner = owner
        self.field = field
    }

    /// The copy's descriptor, under a new value ID.
    func copyDescriptor(valueID: UUID) -> ExternalValueDescriptor {
        ExternalValueDescriptor(valueID: valueID, byteCount: descriptor.byteCount, chunkSize: descriptor.chunkSize)
    }

    /// The descriptor of the copy to give the model in this transaction: staged before it, or, for an empty value or
    /// a transaction without a write state (a delete rule's rewrite), copied in it.
    ///
    /// - Throws: ``ExternalCopiesNeeded`` when the copy is not staged yet, after recording it in `writes`; the errors
    ///   of ``copyChunks(_:to:in:)``.
    func copied(in txn: borrowing Transaction, writes: WriteState?) throws -> ExternalValueDescriptor {
        guard descriptor.chunkCount > 0, let writes else {
            let valueID = UUID.timeOrdered()
            try checkSource(in: txn)
            try copyChunks(0..<descriptor.chunkCount, to: valueID, in: txn)
            return copyDescriptor(valueID: valueID)
        }
        if let staged = writes.stagedCopies[key] {
            // A second save of the same model in this transaction finds the entry removed by the first.
            if try target.isStaged(owner: owner, field: field.id, value: staged.valueID, in: txn) {
                try target.finishStaging(owner: owner, field: field.id, value: staged.valueID, in: txn)
            }
            return staged
        }
        writes.copyRequests.append(self)
        throw ExternalCopiesNeeded(requests: writes.copyRequests)
    }

    /// Checks that the source model still holds the value, whole.
    ///
    /// - Throws: ``KVStoreError/missingExternalData`` saying whether the source model was deleted or its value
    ///   replaced (or damaged), and what to do.
    func checkSource(in txn: borrowing Transaction) throws {
        let source = "\(sourceTable.entity).\(sourceField.name) of \(sourceOwner)"
        let given = "\(target.entity).\(field.name) of \(owner) was given the value of \(source)"
        guard try self.source.exists(sourceOwner, in: txn) else {
            throw KVStoreError(
                .missingExternalData, entity: target.entity, id: owner, field: field.name,
                message: "\(given), and that \(sourceTable.entity) was deleted before the save, with its chunks; "
                    + "nothing of this save was written. Set the value from a model that is stored, or set its bytes "
                    + "with ExternalData(_:)")
        }
        do {
            try sourceTable.verify(descriptor, owner: sourceOwner, field: sourceField, in: txn)
        } catch let error as KVStoreError where error == .missingExternalData {
            throw KVStoreError(
                .missingExternalData, entity: target.entity, id: owner, field: field.name,
                message: "\(given), which that \(sourceTable.entity) no longer holds whole: it was replaced since it "
                    + "was read (or the store is damaged); nothing of this save was written. Fetch the "
                    + "\(sourceTable.entity) again and assign the value it holds now", cause: error)
        }
    }

    /// Copies chunks `range` of the value to the target's chunks of the value `valueID`, one chunk in memory at a time.
    ///
    /// - Throws: ``KVStoreError/missingExternalData`` or ``KVStoreError/damaged`` for a source chunk that is missing or
    ///   does not check out; what LMDB throws.
    func copyChunks(_ range: Range<Int>, to valueID: UUID, in txn: borrowing Transaction) throws {
        for index in range {
            // Copied out of the map: the put below may reuse the pages a view of it points at.
            let chunk = try sourceTable.withChunk(
                index, of: descriptor, owner: sourceOwner, field: sourceField, in: txn, Array.init)
            try chunk.withBorrowedBytes { bytes in
                try target.putChunk(bytes, owner: owner, field: field.id, value: valueID, index: index, in: txn)
            }
        }
    }
}

/// Thrown by a save that needs copies of external values that are not staged yet: the write stages them, in
/// transactions of their own, and runs its body again (see ``ExternalValueCopies``).
struct ExternalCopiesNeeded: Error {
    /// Every copy the attempt needed and did not find staged.
    let requests: [ExternalValueCopy]
}

/// The copies of external values that one write staged before its transaction, and the lock that keeps them while it
/// runs.
///
/// A copy goes the way of a streamed write: a batch of 16 MiB of chunks per write transaction, listed in the staging
/// table under the token of a lock this write holds, so that a write transaction never holds more than a batch of
/// dirty pages and this process never more than one chunk. The save's transaction removes the staging entry of each
/// copy it gives to its model; once the write is over (committed or not), ``discardUnused(read:write:)`` deletes the copies
/// that are still staged. If the process dies meanwhile, the lock goes with it and the next open of the store deletes
/// them.
struct ExternalValueCopies: Sendable {
    /// How many bytes of chunks one write transaction copies, as a streamed write writes.
    static let batchBytes = 16 << 20

    /// The descriptor of each staged copy.
    private(set) var staged: [ExternalValueCopy.Key: ExternalValueDescriptor] = [:]
    private var copies: [ExternalValueCopy] = []
    private var lock: (held: HeldStoreLock, token: UInt32)?

    var isEmpty: Bool { copies.isEmpty }

    /// Stages the copies of `requests` not staged yet, each in batches of chunks, one write transaction per batch.
    ///
    /// - Parameters:
    ///   - directory: The store's directory, where the lock is taken.
    ///   - write: Runs a batch in a write transaction of its own.
    /// - Throws: ``KVStoreError/missingExternalData`` when a source model was deleted or its value replaced, what the
    ///   lock or a write throws; the copy that failed is deleted (the ones staged before it are kept until
    ///   ``discardUnused(read:write:)``).
    mutating func stage(
        _ requests: [ExternalValueCopy], directory: String,
        write: ((borrowing Transaction) throws -> Void) throws -> Void
    ) throws {
        let token = try lockToken(in: directory)
        for copy in requests where staged[copy.key] == nil {
            let valueID = UUID.timeOrdered()
            let count = copy.descriptor.chunkCount
            let perBatch = max(1, Self.batchBytes / max(1, copy.descriptor.chunkSize))
            var next = 0
            do {
                while next < count {
                    let range = next..<min(next + perBatch, count)
                    try write { txn in
                        if range.lowerBound == 0 {
                            try copy.checkSource(in: txn)
                            try copy.target.beginStaging(
                                owner: copy.owner, field: copy.field.id, value: valueID, lockToken: token, in: txn)
                        }
                        try copy.copyChunks(range, to: valueID, in: txn)
                    }
                    next = range.upperBound
                }
            } catch {
                if next > 0 { try Self.delete(copy, valueID: valueID, write: write) }
                throw error
            }
            staged[copy.key] = copy.copyDescriptor(valueID: valueID)
            copies.append(copy)
        }
    }

    /// Deletes the staged copies that no committed save took (all of them after a write that failed), in one write
    /// transaction, when a read transaction finds any.
    ///
    /// - Throws: What the read or the write throws; the copies stay staged then, and the next open of the store
    ///   deletes them.
    func discardUnused(
        read: ((borrowing Transaction) throws -> Bool) throws -> Bool,
        write: ((borrowing Transaction) throws -> Void) throws -> Void
    ) throws {
        func unused(in txn: borrowing Transaction) throws -> [(ExternalValueCopy, UUID)] {
            var unused: [(ExternalValueCopy, UUID)] = []
            for copy in copies {
                guard let valueID = staged[copy.key]?.valueID,
                    try copy.target.isStaged(owner: copy.owner, field: copy.field.id, value: valueID, in: txn)
                else { continue }
                unused.append((copy, valueID))
            }
            return unused
        }
        guard !copies.isEmpty, try read({ txn in try !unused(in: txn).isEmpty }) else { return }
        try write { txn in
            for (copy, valueID) in try unused(in: txn) {
                try copy.target.deleteValue(owner: copy.owner, field: copy.field.id, value: valueID, in: txn)
                try copy.target.finishStaging(owner: copy.owner, field: copy.field.id, value: valueID, in: txn)
            }
        }
    }

    private static func delete(
        _ copy: ExternalValueCopy, valueID: UUID, write: ((borrowing Transaction) throws -> Void) throws -> Void
    ) throws {
        try write { txn in
            try copy.target.deleteValue(owner: copy.owner, field: copy.field.id, value: valueID, in: txn)
            try copy.target.finishStaging(owner: copy.owner, field: copy.field.id, value: valueID, in: txn)
        }
    }

    /// The token of the lock this write holds while its copies are staged, taken on first use.
    private mutating func lockToken(in directory: String) throws -> UInt32 {
        if let lock { return lock.token }
        while true {
            // Another writer holding the same token is a 1 in 2^32 chance, met by drawing again.
            let token = StoreLock.newStreamToken()
            if let held = try StoreLock.streamedValue(token).tryAcquire(in: directory) {
                lock = (held, token)
                return token
            }
        }
    }
}
