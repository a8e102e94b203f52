import Foundation
import KVStore
import KVStoreInspection
import LMDB
import NATS

/// Keeps a store a read replica of a primary: applies the groups of commits the primary's publisher sends to a
/// stream, in stream order, each exactly once.
///
/// A replica starts as a copy of the primary with its history (`kvtool copy`, or any copy of the store's directory
/// made while no one writes it): the copy's last history position says where in the stream it goes on. The first
/// ``Replica`` on the store marks it a replica of the stream; from then on containers of the store read it (fetches,
/// relationships, observation: the replica records the primary's history entries under the primary's tokens) but
/// every write through them throws `KVStoreError.readOnly`.
///
/// Each group is applied in one transaction, with the replica's progress (the stream sequence and the commit), so a
/// reader only sees states the primary had, and a replica killed at any moment goes on where its last transaction
/// left it.
///
/// ```swift
/// let container = try ModelContainer(for: Order.self, configuration: ModelConfiguration(path: copyPath))
/// let replica = try Replica(container: container, stream: stream, jetStream: jetStream)
/// replica.start()
/// let status = try replica.status()   // commits and seconds behind the primary
/// ```
public final class Replica: Sendable {
    /// How the replica paces itself.
    public struct Options: Sendable {
        /// The most messages one fetch asks for.
        public var batch = 256
        /// How long the thread's fetches wait for new messages.
        public var wait: Duration = .milliseconds(500)
        /// How long the thread waits after a failure before it tries again.
        public var retryDelay: Duration = .milliseconds(200)

        /// The default options.
        public init() {}
    }

    /// Where the replica stands against the primary.
    public struct Status: Sendable {
        /// The last commit applied.
        public var appliedToken: HistoryToken
        /// When the primary made it.
        public var appliedCommitDate: Date?
        /// The last commit the stream holds.
        public var primaryToken: HistoryToken?
        /// When the primary made it.
        public var primaryCommitDate: Date?
        /// Commits the stream holds that the replica has not applied.
        public var commitsBehind: UInt64
        /// How much older the last commit applied is than the stream's last one, in seconds; 0 when caught up.
        public var secondsBehind: TimeInterval
        /// The last failure of the replica's thread since it last applied a commit, if any.
        public var lastError: (any Error)?
        /// Whether the thread runs.
        public var isRunning: Bool
    }

    /// A group whose parts are arriving.
    private struct Pending {
        var header: GroupHeader
        var items: [GroupItem]
        var sequence: UInt64
    }

    private struct State {
        var nextSequence: UInt64?
        var consumer: String?
        var pending: Pending?
        var lastError: (any Error)?
        var hasThread = false
        var stopRequested = false
    }

    /// The stream.
    public let stream: ReplicationStream
    /// The JetStream context it reads through.
    public let jetStream: JetStream
    /// The options.
    public let options: Options
    private let store: ReplicatedStore
    private let primaryStoreID: UUID
    private let longKeyHash: LongKeyHash
    private let progressTable: Table
    /// The history table, which the primary's entries go to.
    private let historyTable: HistoryTable
    private let state = Locked(State())
    private let passLock = Locked(0)

    /// Makes `container`'s store a replica of `stream`, or opens it as one.
    ///
    /// - Parameters:
    ///   - container: A container of the replica's store: a copy of the primary with its history.
    ///   - stream: The stream the primary publishes to.
    ///   - jetStream: The JetStream context of a connection.
    ///   - options: Pacing.
    /// - Throws: ``ReplicationError/Kind/historyNotEnabled`` for a store without history (not a copy of a primary
    ///   that records one), ``ReplicationError/Kind/wrongStore`` for a replica of another stream or for a primary (a
    ///   store a publisher ran on: a replica starts from a copy of it), `KVStoreError` when the store cannot be
    ///   written. Nothing is written to a store that is refused.
    public init(
        container: ModelContainer, stream: ReplicationStream, jetStream: JetStream, options: Options = Options()
    ) throws {
        let store = ReplicatedStore(container)
        self.store = store
        self.stream = stream
        self.jetStream = jetStream
        self.options = options
        longKeyHash = container.longKeyHash
        // Everything is checked before anything is written: a store refused here is left as it was.
        let identity = PrimaryCatalog.dataFileIdentity(ofStoreIn: store.path)
        let isReplica = try store.environment.read { txn -> Bool in
            let history = try store.requireHistory(in: txn)
            if let replica = try ReplicaCatalog.read(in: txn, table: store.catalog) {
                guard replica.stream == stream.name, replica.primaryStoreID == history.storeID else {
                    throw ReplicationError(
                        .wrongStore,
                        "The store at \(store.path) is a replica of the stream '\(replica.stream)', not of "
                            + "'\(stream.name)'. Bootstrap a replica of '\(stream.name)' from a copy of its primary")
                }
                return true
            }
            if let primary = try PrimaryCatalog.read(in: txn, table: store.catalog), primary.dataFile == identity {
                throw ReplicationError(
                    .wrongStore,
                    "The store at \(store.path) is the primary of the stream '\(primary.stream)' (its publisher ran on "
                        + "this data file): making it a replica would end its writes for good. Start a replica from a "
                        + "copy of it ('kvtool copy'); nothing was changed")
            }
            return false
        }
        progressTable = try store.environment.openTable(named: ReplicaProgress.tableName, create: true)
        historyTable = HistoryTable(
            table: try store.environment.openTable(named: Catalog.historyTableName, create: true))
        primaryStoreID = try store.environment.write { txn in
            let history = try store.requireHistory(in: txn)
            if !isReplica {
                // A copy of a primary carries the primary's mark, which no longer applies.
                try Catalog.delete(key: PrimaryCatalog.key, in: txn, table: store.catalog)
                try Catalog.write(
                    ReplicaCatalog(stream: stream.name, primaryStoreID: history.storeID, since: Date()),
                    key: ReplicaCatalog.key, in: txn, table: store.catalog)
            }
            return history.storeID
        }
    }

    deinit {
        stop()
    }

    // MARK: - Applying

    /// Fetches what the stream holds after the replica's place (waiting up to `wait` for a first message) and applies
    /// every group it completes.
    ///
    /// - Parameter wait: How long to wait for a message when the stream has none; zero returns at once.
    /// - Returns: How many commits were applied.
    /// - Throws: ``ReplicationError/Kind/historyGap`` when the stream no longer holds the commits after the replica's
    ///   (bootstrap again), ``ReplicationError/Kind/diverged`` for a stream of another store,
    ///   ``ReplicationError/Kind/invalidMessage``; `NATSError` and `JetStreamError` from the stream
    ///   (call again: the replica goes on from its place); `KVStoreError` when the store cannot be written.
    @discardableResult
    public func applyAvailable(wait: Duration = .zero) throws -> Int {
        try passLock.withLock { _ in
            let start = try state.withLock({ $0.nextSequence }) ?? locate()
            state.withLock { $0.nextSequence = start }
            let consumer = try state.withLock({ $0.consumer }) ?? makeConsumer(startingAt: start)
            var messages: [JetStreamMessage]
            do {
                // What the stream holds now; when it holds nothing, a wait for the next message, then what came
                // with it (a pull for a whole batch would wait until the batch filled or the wait ended).
                let pull = jetStream.pullConsumer(stream: stream.name, consumer: consumer)
                messages = try pull.fetch(batch: options.batch, noWait: true)
                if messages.isEmpty, wait > .zero {
                    messages = try pull.fetch(batch: 1, expires: wait)
                    if !messages.isEmpty, options.batch > 1 {
                        messages += try pull.fetch(batch: options.batch - 1, noWait: true)
                    }
                }
            } catch {
                // The consumer may be gone (the server restarted, or it idled out): a new one starts at the place.
                state.withLock { $0.consumer = nil }
                throw error
            }
            do {
                return try receive(messages)
            } catch {
                // The consumer delivered messages that were not applied: the next call starts again from the
                // progress the store recorded, with a new consumer.
                state.withLock { state in
                    state.consumer = nil
                    state.nextSequence = nil
                    state.pending = nil
                }
                throw error
            }
        }
    }

    /// Sorts fetched messages into groups and applies the complete ones in one transaction.
    private func receive(_ messages: [JetStreamMessage]) throws -> Int {
        var complete: [Pending] = []
        var pending = state.withLock { $0.pending }
        var next = state.withLock { $0.nextSequence } ?? 1
        func sort(_ message: JetStreamMessage) throws {
            let sequence = message.metadata.streamSequence
            guard sequence >= next else { return }
            next = sequence + 1
            let header = try GroupHeader(headers: message.headers, sequence: sequence, stream: stream.name)
            guard header.storeID == primaryStoreID else {
                throw ReplicationError(
                    .diverged,
                    "Message \(sequence) of the stream '\(stream.name)' carries the history of store "
                        + "\(header.storeID), and this replica follows \(primaryStoreID): another primary publishes "
                        + "to the stream. Nothing of it was applied")
            }
            let items = try GroupItem.decodeAll(message.payload, sequence: sequence, stream: stream.name)
            if header.part == 1 {
                // A group whose parts stopped coming was abandoned by its publisher, which sent it again.
                pending = Pending(header: header, items: items, sequence: sequence)
            } else if var group = pending, group.header.first == header.first, group.header.last == header.last,
                group.header.count == header.count, group.header.part + 1 == header.part
            {
                group.header.part = header.part
                group.items += items
                group.sequence = sequence
                pending = group
            } else {
                pending = nil
                return
            }
            if let group = pending, group.header.isLastPart {
                complete.append(group)
                pending = nil
            }
        }
        // A message that is not a group stops the replica, after the groups completed before it are applied.
        var failure: (any Error)?
        for message in messages where failure == nil {
            do { try sort(message) } catch { failure = error }
        }
        let applied = try apply(complete)
        if let failure { throw failure }
        state.withLock { state in
            state.pending = pending
            state.nextSequence = next
        }
        return applied
    }

    /// Applies complete groups in one write transaction, with the progress.
    private func apply(_ groups: [Pending]) throws -> Int {
        guard !groups.isEmpty else { return 0 }
        let store = self.store
        let tables = try openTables(for: groups)
        let progressTable = self.progressTable
        return try store.environment.write { txn in
            let history = try store.requireHistory(in: txn)
            let historyTable = self.historyTable
            var progress = try currentProgress(in: txn, history: historyTable)
            var applied = 0
            var writers: [String: EntityWriter]?
            for group in groups {
                defer { progress.sequence = max(progress.sequence, group.sequence) }
                let header = group.header
                let catalog = try newerCatalog(of: group, than: progress)
                if let catalog {
                    try adoptCatalog(catalog, tables: tables, in: txn)
                    progress.catalogPosition = header.snapshot
                    writers = nil
                }
                if header.last <= progress.position { continue }
                guard header.first <= progress.position + 1 else {
                    throw ReplicationError(
                        .historyGap,
                        "The replica at \(store.path) applied the primary's commits through \(progress.position), "
                            + "and the stream '\(stream.name)' goes on with commits \(header.first)-\(header.last): "
                            + "it no longer holds those between (its limits dropped them). Bootstrap the replica "
                            + "again from a copy of the primary")
                }
                let prepared = try writers ?? entityWriters(tables: tables, in: txn)
                writers = prepared
                try applyGroup(
                    group, after: progress.position, writers: prepared, history: history, table: historyTable, in: txn)
                applied += Int(header.last - progress.position)
                progress.position = header.last
                progress.committedMicros = header.committedMicros
            }
            try progress.write(in: txn, table: progressTable)
            return applied
        }
    }

    /// The progress as the transaction sees it; before the first group, the copy's last history position.
    private func currentProgress(in txn: borrowing Transaction, history: HistoryTable) throws -> ReplicaProgress {
        let counter = try history.counter(in: txn)
        guard let progress = try ReplicaProgress.read(in: txn, table: progressTable, path: store.path) else {
            return ReplicaProgress(
                sequence: 0, position: counter.last, committedMicros: 0, catalogPosition: counter.last)
        }
        guard progress.position == counter.last else {
            throw KVStoreError(
                .damaged,
                message: "The replica at \(store.path) recorded commit \(progress.position) as applied, and its "
                    + "history ends at \(counter.last): something other than its replication wrote it. Bootstrap "
                    + "it again from a copy of the primary")
        }
        return progress
    }

    /// The tables a group writes, by name, opened (and created) before the transaction.
    private func openTables(for groups: [Pending]) throws -> [String: Table] {
        let store = self.store
        var entities = try store.environment.read { txn in
            try Catalog.entities(in: txn, table: store.catalog).entities
        }
        for group in groups {
            for case .catalogEntry(let key, let value) in group.items
            where key.starts(with: Catalog.entityKeyPrefix) {
                entities.append(try Catalog.decodeStored(EntityCatalog.self, bytes: value, key: key))
            }
        }
        var tables: [String: Table] = [:]
        for entity in entities {
            let records = Catalog.recordTableName(entity.name)
            tables[records] = try store.environment.openTable(named: records, create: true)
            for index in entity.indexes {
                let name = Catalog.indexTableName(entity.name, index.name)
                tables[name] = try store.environment.openTable(
                    named: name, options: Catalog.indexTableOptions(unique: index.isUnique), create: true)
            }
            if !entity.external.isEmpty {
                for name in CatalogExternalValues.tableNames(entity: entity.name) {
                    tables[name] = try store.environment.openTable(named: name, create: true)
                }
            }
        }
        return tables
    }

    /// What writing an entity's records needs, made once per transaction (and again after a catalog change).
    private final class EntityWriter {
        let catalog: EntityCatalog
        let records: Table
        let indexes: [DerivedIndex]
        /// The entity's external values, when it has external fields.
        let values: CatalogExternalValues?
        /// Whether a value of an index may move from one model to another within a group, so that every old entry
        /// must go before any new one is added.
        let hasUniqueIndex: Bool

        init(catalog: EntityCatalog, records: Table, indexes: [DerivedIndex], values: CatalogExternalValues?) {
            self.catalog = catalog
            self.records = records
            self.indexes = indexes
            self.values = values
            hasUniqueIndex = indexes.contains { $0.catalog.isUnique }
        }
    }

    /// The writers of the entities of the catalog `txn` sees.
    private func entityWriters(tables: [String: Table], in txn: borrowing Transaction) throws -> [String: EntityWriter]
    {
        var writers: [String: EntityWriter] = [:]
        let isChecked =
            (try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: store.catalog)?.formatVersion
                ?? Catalog.newStoreFormatVersion) >= 2
        for entity in try Catalog.entities(in: txn, table: store.catalog).entities {
            let indexes = try entity.indexes.map { index in
                DerivedIndex(catalog: index, table: try table(Catalog.indexTableName(entity.name, index.name), tables))
            }
            let values =
                entity.external.isEmpty
                ? nil
                : CatalogExternalValues(
                    entity: entity.name, chunks: try table(Catalog.externalTableName(entity.name), tables),
                    staging: try table(Catalog.stagingTableName(entity.name), tables),
                    checksums: isChecked ? try table(Catalog.checksumTableName(entity.name), tables) : nil)
            writers[entity.name] = EntityWriter(
                catalog: entity, records: try table(Catalog.recordTableName(entity.name), tables), indexes: indexes,
                values: values)
        }
        return writers
    }

    private func applyGroup(
        _ group: Pending, after position: UInt64, writers: [String: EntityWriter], history: HistoryCatalog,
        table historyTable: HistoryTable, in txn: borrowing Transaction
    ) throws {
        // The models' final records: every old index entry goes first, so that a unique value that moved from one
        // model to another within the group never meets its old holder.
        var finals: [(writer: EntityWriter, id: UUID, bytes: [UInt8]?)] = []
        finals.reserveCapacity(group.items.count)
        var last: (name: String, writer: EntityWriter)?
        func writer(_ name: String) throws -> EntityWriter {
            if let last, last.name == name { return last.writer }
            guard let writer = writers[name] else {
                throw ReplicationError(
                    .invalidMessage,
                    "A group of the stream '\(stream.name)' changes the entity \(name), which the replica's catalog "
                        + "does not have; nothing of it was applied. Bootstrap the replica again from a copy of the "
                        + "primary")
            }
            last = (name, writer)
            return writer
        }
        var chunks: [(writer: EntityWriter, key: [UInt8], offset: Int, total: Int, bytes: [UInt8])] = []
        for item in group.items {
            switch item {
            case .record(let name, let id, let bytes): finals.append((try writer(name), id, bytes))
            case .deletion(let name, let id):
                // A model of an entity a migration removed since: the catalog's removal emptied its records.
                if writers[name] == nil { continue }
                finals.append((try writer(name), id, nil))
            case .externalChunk(let name, let key, let offset, let total, let bytes):
                chunks.append((try writer(name), key, offset, total, bytes))
            case .catalogEntry, .historyEntry: continue
            }
        }
        try replaceExternalValues(of: finals, with: chunks, in: txn)
        // (An entity without unique indexes goes from old to new in one step, which leaves the entries of unchanged
        // values alone.)
        for final in finals where final.bytes == nil || final.writer.hasUniqueIndex {
            let key = final.id.keyBytes
            guard let old = try txn.value(forKey: key, in: final.writer.records) else { continue }
            try changeIndexes(of: final.writer, id: final.id, key: key, old: old, new: nil, in: txn)
            if final.bytes == nil { _ = try txn.delete(forKey: key, in: final.writer.records) }
        }
        for final in finals {
            guard let bytes = final.bytes else { continue }
            let key = final.id.keyBytes
            let old =
                final.writer.hasUniqueIndex || final.writer.indexes.isEmpty
                ? nil : try txn.value(forKey: key, in: final.writer.records)
            try changeIndexes(of: final.writer, id: final.id, key: key, old: old, new: bytes, in: txn)
            try txn.put(bytes, forKey: key, in: final.writer.records)
        }
        let now = Date()
        for case .historyEntry(let at, let bytes) in group.items where at > position {
            try historyTable.appendCopy(bytes, at: at, retention: history.retention, now: now, in: txn)
        }
    }

    /// Deletes the external values the group's models no longer hold, writes those the group sends, and checks that
    /// every value the new records hold is there.
    private func replaceExternalValues(
        of finals: [(writer: EntityWriter, id: UUID, bytes: [UInt8]?)],
        with chunks: [(writer: EntityWriter, key: [UInt8], offset: Int, total: Int, bytes: [UInt8])],
        in txn: borrowing Transaction
    ) throws {
        var held: [(values: CatalogExternalValues, id: UUID, field: UInt32, descriptor: ExternalDescriptor)] = []
        for final in finals {
            guard let values = final.writer.values else { continue }
            let entity = final.writer.catalog
            guard let bytes = final.bytes else {
                try values.deleteAll(owner: final.id, in: txn)
                continue
            }
            let new = try decode(bytes, entity: entity, id: final.id)
            let old = try txn.value(forKey: final.id.keyBytes, in: final.writer.records).map {
                try decode($0, entity: entity, id: final.id)
            }
            for field in entity.external {
                let now = ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: new))
                if let now { held.append((values, final.id, field.fieldID, now)) }
                guard let old, let was = ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: old)),
                    was.valueID != now?.valueID
                else { continue }
                try values.deleteValue(owner: final.id, field: field.fieldID, value: was.valueID, in: txn)
            }
        }
        var assembling: [[UInt8]: [UInt8]] = [:]
        for chunk in chunks {
            guard let values = chunk.writer.values, chunk.key.count == 40 else {
                throw ReplicationError(
                    .invalidMessage,
                    "A group of the stream '\(stream.name)' holds an external chunk of \(chunk.writer.catalog.name) "
                        + "that the replica's catalog has no external fields for, or a malformed chunk key; nothing "
                        + "of it was applied")
            }
            var bytes = assembling[chunk.key] ?? []
            guard bytes.count == chunk.offset else {
                throw ReplicationError(
                    .invalidMessage,
                    "A group of the stream '\(stream.name)' holds the pieces of an external chunk out of order; "
                        + "nothing of it was applied")
            }
            bytes += chunk.bytes
            guard bytes.count == chunk.total else {
                assembling[chunk.key] = bytes
                continue
            }
            assembling[chunk.key] = nil
            let key = chunk.key
            try bytes.withBorrowedBytes { bytes in
                try values.writeChunk(
                    bytes, owner: UUID(keyBytes: key[0..<16]) ?? UUID(), field: UInt32(bigEndian: key, at: 16),
                    value: UUID(keyBytes: key[20..<36]) ?? UUID(), index: Int(UInt32(bigEndian: key, at: 36)),
                    in: txn)
            }
        }
        guard assembling.isEmpty else {
            throw ReplicationError(
                .invalidMessage,
                "A group of the stream '\(stream.name)' holds an external chunk without all its pieces; nothing of "
                    + "it was applied")
        }
        for value in held where value.descriptor.chunkCount > 0 {
            let last = CatalogExternalValues.chunkKey(
                owner: value.id, field: value.field, value: value.descriptor.valueID,
                chunk: value.descriptor.chunkCount - 1)
            guard try txn.containsKey(last, in: value.values.chunks) else {
                throw ReplicationError(
                    .historyGap,
                    "A model \(value.id) of the stream '\(stream.name)' holds an external value the replica at "
                        + "\(store.path) does not have, and the stream did not send it again: the replica did not "
                        + "start from a copy of the primary. Nothing of the group was applied; bootstrap the replica "
                        + "again from a copy of the primary")
            }
        }
    }

    /// The catalog entries a group carries, when they come from a snapshot newer than the replica's catalog.
    private func newerCatalog(
        of group: Pending, than progress: ReplicaProgress
    ) throws -> [(key: [UInt8], value: [UInt8])]? {
        guard group.header.snapshot > progress.catalogPosition else { return nil }
        let entries = group.items.compactMap { item -> (key: [UInt8], value: [UInt8])? in
            if case .catalogEntry(let key, let value) = item { return (key, value) }
            return nil
        }
        return entries.isEmpty ? nil : entries
    }

    /// Takes the primary's catalog: its entries in place of the replica's, the indexes it added built from the
    /// replica's records, those it removed emptied.
    private func adoptCatalog(
        _ entries: [(key: [UInt8], value: [UInt8])], tables: [String: Table], in txn: borrowing Transaction
    ) throws {
        let before = try Catalog.entities(in: txn, table: store.catalog).entities
        try replaceCatalog(with: entries, in: txn)
        let after = Dictionary(
            try Catalog.entities(in: txn, table: store.catalog).entities.map { ($0.name, $0) },
            uniquingKeysWith: { a, _ in a })
        try followIndexChanges(from: before, to: after, tables: tables, in: txn)
    }

    /// Replaces the replica's catalog entries with the primary's, keeping its own.
    private func replaceCatalog(with entries: [(key: [UInt8], value: [UInt8])], in txn: borrowing Transaction) throws {
        let keep = Set(entries.map(\.key))
        for entry in try txn.entries(in: store.catalog)
        where !ReplicatedStore.localCatalogKeys.contains(entry.key) && !keep.contains(entry.key) {
            _ = try txn.delete(forKey: entry.key, in: store.catalog)
        }
        for entry in entries where !ReplicatedStore.localCatalogKeys.contains(entry.key) {
            try Catalog.putCopy(entry.value, key: entry.key, in: txn, table: store.catalog)
        }
        try Catalog.advanceGeneration(in: txn, table: store.catalog)
    }

    /// Builds the indexes the primary added to entities the replica has records of, and empties those it removed.
    private func followIndexChanges(
        from before: [EntityCatalog], to after: [String: EntityCatalog], tables: [String: Table],
        in txn: borrowing Transaction
    ) throws {
        for old in before {
            let new = after[old.name]
            for index in old.indexes where new?.indexes.contains(where: { $0.name == index.name }) != true {
                if let table = tables[Catalog.indexTableName(old.name, index.name)] { try txn.empty(table) }
            }
            guard let new else {
                if let records = tables[Catalog.recordTableName(old.name)] { try txn.empty(records) }
                continue
            }
            let added = new.indexes.filter { index in !old.indexes.contains { $0.name == index.name } }
            guard !added.isEmpty else { continue }
            let derived = try added.map { index in
                DerivedIndex(catalog: index, table: try table(Catalog.indexTableName(new.name, index.name), tables))
            }
            let records = try table(Catalog.recordTableName(new.name), tables)
            for entry in try txn.entries(in: records) {
                guard let id = UUID(keyBytes: entry.key) else { continue }
                let record = try decode(entry.value, entity: new, id: id)
                try entry.key.withBorrowedBytes { key in
                    try DerivedIndexChanges(
                        derived, entity: new.name, id: id, old: nil, new: record, key: key, records: records,
                        fields: new.fields, hash: longKeyHash, in: txn
                    ).apply(key: key, in: txn)
                }
            }
        }
    }

    /// Removes the index entries of `old` and adds those of `new` (either may be `nil`).
    private func changeIndexes(
        of writer: EntityWriter, id: UUID, key: [UInt8], old: [UInt8]?, new: [UInt8]?, in txn: borrowing Transaction
    ) throws {
        guard !writer.indexes.isEmpty else { return }
        let entity = writer.catalog
        let oldRecord = try old.map { try decode($0, entity: entity, id: id) }
        let newRecord = try new.map { try decode($0, entity: entity, id: id) }
        try key.withBorrowedBytes { key in
            try DerivedIndexChanges(
                writer.indexes, entity: entity.name, id: id, old: oldRecord, new: newRecord, key: key,
                records: writer.records, fields: entity.fields, hash: longKeyHash, in: txn
            ).apply(key: key, in: txn)
        }
    }

    private func decode(_ bytes: [UInt8], entity: EntityCatalog, id: UUID) throws -> RecordValue {
        do {
            return try bytes.withBorrowedBytes { try RecordValue.decode(from: $0, fields: entity.fields) }
        } catch {
            throw ReplicationError(
                .invalidMessage,
                "The record of \(entity.name) \(id) from the stream '\(stream.name)' does not decode with the "
                    + "replica's catalog (\(error)); nothing of its group was applied. Bootstrap the replica again "
                    + "from a copy of the primary")
        }
    }

    private func table(_ name: String, _ tables: [String: Table]) throws -> Table {
        guard let table = tables[name] else {
            throw KVStoreError(.damaged, message: "The table '\(name)' of the replica at \(store.path) is missing")
        }
        return table
    }

    // MARK: - Finding the place

    /// The stream sequence to read from: after the last applied group, or for a new replica the first message of the
    /// group after the copy's last commit.
    private func locate() throws -> UInt64 {
        let store = self.store
        let progressTable = self.progressTable
        let (progress, position) = try store.environment.read { txn -> (ReplicaProgress?, UInt64) in
            let counter = try historyTable.counter(in: txn).last
            return (try ReplicaProgress.read(in: txn, table: progressTable, path: store.path), counter)
        }
        if let progress, progress.sequence > 0 { return progress.sequence + 1 }
        let info = try jetStream.streamInfo(stream.name)
        guard info.state.messages > 0 else { return info.state.lastSequence + 1 }
        // The first message of a snapshot after the copy's last commit, by bisection on the headers: its group, or a
        // later one of the same pass, holds the next commit, and it carries the catalog if the pass sent one.
        var low = info.state.firstSequence
        var high = info.state.lastSequence + 1
        while low < high {
            let middle = low + (high - low) / 2
            if try header(at: middle).snapshot > position { high = middle } else { low = middle + 1 }
        }
        guard low <= info.state.lastSequence else { return low }
        var found = try header(at: low)
        let start = low - UInt64(found.part - 1)
        if found.part > 1 { found = try header(at: start) }
        guard found.first <= position + 1 else {
            throw ReplicationError(
                .historyGap,
                "The replica at \(store.path) is a copy of the primary through commit \(position), and the stream "
                    + "'\(stream.name)' begins at commit \(found.first): it no longer holds the commits between (its "
                    + "limits dropped them). Bootstrap the replica again from a newer copy of the primary")
        }
        return start
    }

    private func header(at sequence: UInt64) throws -> GroupHeader {
        let message = try jetStream.message(stream: stream.name, sequence: sequence)
        return try GroupHeader(headers: message.headers, sequence: sequence, stream: stream.name)
    }

    private func makeConsumer(startingAt sequence: UInt64) throws -> String {
        let info = try jetStream.createConsumer(
            stream: stream.name,
            configuration: ConsumerConfiguration(
                deliverPolicy: .byStartSequence(sequence), ackPolicy: .none, inactiveThreshold: .seconds(60)))
        state.withLock { $0.consumer = info.name }
        return info.name
    }

    // MARK: - Status and the thread

    /// Where the replica stands: the last commit applied, and how far the stream's last commit is ahead.
    ///
    /// - Throws: `KVStoreError` when the store cannot be read; `NATSError` and
    ///   `JetStreamError` when the stream cannot.
    public func status() throws -> Status {
        let store = self.store
        let progressTable = self.progressTable
        let progress = try store.environment.read { txn -> ReplicaProgress in
            let counter = try historyTable.counter(in: txn).last
            return try ReplicaProgress.read(in: txn, table: progressTable, path: store.path)
                ?? ReplicaProgress(sequence: 0, position: counter, committedMicros: 0, catalogPosition: counter)
        }
        let last = try jetStream.lastMessage(stream: stream.name, subject: stream.subject).map { message in
            try GroupHeader(headers: message.headers, sequence: message.sequence, stream: stream.name)
        }
        let applied =
            progress.committedMicros > 0 ? Date(timeIntervalSince1970: Double(progress.committedMicros) / 1e6) : nil
        let primaryLast = last.map { $0.isLastPart ? $0.last : $0.first - 1 }
        let behind = primaryLast.map { $0 > progress.position ? $0 - progress.position : 0 } ?? 0
        let primaryDate = last?.committed
        var seconds: TimeInterval = 0
        if behind > 0, let primaryDate { seconds = max(0, primaryDate.timeIntervalSince(applied ?? .distantPast)) }
        let (error, running) = state.withLock { ($0.lastError, $0.hasThread) }
        return Status(
            appliedToken: HistoryToken(storeID: primaryStoreID, position: progress.position),
            appliedCommitDate: applied,
            primaryToken: primaryLast.map { HistoryToken(storeID: primaryStoreID, position: $0) },
            primaryCommitDate: primaryDate, commitsBehind: behind, secondsBehind: seconds, lastError: error,
            isRunning: running)
    }

    /// Whether the replica's thread runs, read without the servers (``status()`` asks them too).
    public var isRunning: Bool {
        state.withLock { $0.hasThread }
    }

    /// The last failure of the replica's thread since it last applied a commit, read without the servers; once
    /// ``isRunning`` is false after ``start()``, the failure that stopped it.
    public var lastError: (any Error)? {
        state.withLock { $0.lastError }
    }

    /// Starts the replica's thread, which applies the stream as it grows until ``stop()``; failures of the stream
    /// are retried, and a gap, a divergence or a store that cannot be written stops it (see ``status()``). The thread
    /// keeps the replica alive until then.
    public func start() {
        let thread = Thread { [weak self] in self?.run() }
        let started = state.withLock { state -> Bool in
            guard !state.hasThread else { return false }
            state.hasThread = true
            state.stopRequested = false
            return true
        }
        if started {
            thread.name = "KVStore replica \(stream.name)"
            thread.start()
        }
    }

    /// Stops the thread, and waits until it stopped (a fetch under way ends first).
    public func stop() {
        state.withLock { $0.stopRequested = true }
        while state.withLock({ $0.hasThread }) { Thread.sleep(forTimeInterval: 0.002) }
    }

    private func run() {
        while !state.withLock({ $0.stopRequested }) {
            do {
                if try applyAvailable(wait: options.wait) > 0 { state.withLock { $0.lastError = nil } }
            } catch {
                state.withLock { $0.lastError = error }
                if error is ReplicationError || error is KVStoreError || JetStreamError.streamNotFound ~= error {
                    break
                }
                Thread.sleep(forTimeInterval: options.retryDelay.seconds)
            }
        }
        state.withLock { $0.hasThread = false }
    }
}
