import Foundation
import KVStore
import KVStoreInspection
import LMDB
import NATS

/// Sends a store's change history to a JetStream stream, for replicas to follow.
///
/// The publisher reads the history the store's commits record (the store needs it on:
/// `ModelContainer.enableHistory(retention:)`) and never takes part in a commit: programs commit at their
/// own pace, and the publisher follows, pipelining its messages. Each message carries a group of consecutive commits
/// with the records of the models they changed, the history entries themselves, and the store's catalog when it
/// changed. A group larger than a message goes out in parts; every message expects the previous one as the stream's
/// last (`Nats-Expected-Last-Sequence` for the first after the publisher found its place, then
/// `Nats-Expected-Last-Msg-Id`), so nothing else slips in between, and its ID is the token of the group's last
/// commit with the part (a repeat is dropped by the stream).
///
/// When it starts, and after any failure, the publisher reads the stream's last message and goes on after it, from
/// the store's history: after a restart, an outage of the NATS servers, or a crash between a commit and its
/// publication, nothing the stream holds is sent again. A group the stream holds only some parts of is sent again
/// whole (replicas drop the incomplete one). When the stream holds a commit the store's history does not have (a
/// primary restored from an older copy, two primaries on one stream), it stops with
/// ``ReplicationError/Kind/diverged`` and publishes nothing.
///
/// ```swift
/// let publisher = try ReplicationPublisher(container: container, stream: stream, jetStream: jetStream)
/// publisher.start()          // follows the commits on a thread of its own
/// // ...
/// publisher.stop()
/// ```
///
/// External values go with the first group since the tail was found that holds their model: a replica has every
/// older one from its copy or from that group. Their chunks go in pieces that fit a message.
public final class ReplicationPublisher: Sendable {
    /// How the publisher paces itself.
    public struct Options: Sendable {
        /// How often the publisher looks for new commits while it keeps up.
        public var pollInterval: Duration = .milliseconds(2)
        /// How many messages may wait for the stream's acknowledgement at once.
        public var maximumInFlight = 256
        /// The most commits one pass reads: a publisher far behind catches up in passes of this many.
        public var commitsPerPass = 4_096
        /// How long the publisher waits after a failure before it tries again (the first wait; it doubles up to
        /// ten times as long while failures go on).
        public var retryDelay: Duration = .milliseconds(100)

        /// The default options.
        public init() {}
    }

    /// Where the publisher stands.
    public struct Status: Sendable {
        /// The token of the last commit the stream holds whole, once the publisher found its place.
        public var publishedToken: HistoryToken?
        /// How many messages this publisher published.
        public var messagesPublished = 0
        /// Whether its thread runs.
        public var isRunning = false
        /// The last failure since the last successful publication, if any.
        public var lastError: (any Error)?
        /// Whether the last failure stopped the publisher.
        public var isStopped = false
    }

    /// The stream's tail as the publisher knows it.
    private struct Tail {
        /// The last commit the stream holds whole.
        var publishedThrough: UInt64
        /// The stream's last sequence.
        var lastSequence: UInt64
        /// The ID of the stream's last message, once this publisher published it.
        var lastMessageID: String?
        /// The catalog entries last sent.
        var sentCatalog: [[UInt8]: [UInt8]]?
        /// The external values sent since the tail was found: a group sends a value's chunks only when it is not
        /// among them (a replica has it from its copy, or from the group that sent it).
        var sentValues: Set<ExternalValueKey> = []
        /// The commits after ``publishedThrough`` read so far, in order: a publisher far behind reads each commit
        /// of its backlog once, not once per pass.
        var backlog: [Commit] = []
    }

    /// An external value: its model, its field and its ID.
    struct ExternalValueKey: Hashable {
        let owner: UUID
        let field: UInt32
        let value: UUID
    }

    /// How many sent values the publisher remembers; past it, it forgets them all and sends values again.
    static let sentValuesLimit = 1 << 20

    private struct State {
        var tail: Tail?
        var status = Status()
        var hasThread = false
        var stopRequested = false
    }

    /// The stream.
    public let stream: ReplicationStream
    /// The JetStream context it publishes through.
    public let jetStream: JetStream
    /// The options.
    public let options: Options
    private let store: ReplicatedStore
    private let state = Locked(State())
    /// Held by the pass that publishes, so that a call of ``publishPending()`` and the thread never publish at once.
    private let passLock = Locked(0)

    /// Prepares to publish the history of `container`'s store.
    ///
    /// - Parameters:
    ///   - container: A container of the primary store.
    ///   - stream: The stream, which must exist (``ReplicationStream/configuration(replicas:maximumAge:maximumBytes:duplicateWindow:)``).
    ///   - jetStream: The JetStream context of a connection.
    ///   - options: Pacing.
    /// Unless the container is read-only, the store is marked as the stream's primary (a catalog entry naming its
    /// data file), so that a ``Replica`` refuses it; a copy of it has another data file.
    ///
    /// - Throws: ``ReplicationError/Kind/wrongStore`` for a store that is a replica; `KVStoreError` when the mark
    ///   cannot be written.
    public init(
        container: ModelContainer, stream: ReplicationStream, jetStream: JetStream, options: Options = Options()
    ) throws {
        store = ReplicatedStore(container)
        self.stream = stream
        self.jetStream = jetStream
        self.options = options
        let store = self.store
        if let replica = try store.environment.read({ txn in try ReplicaCatalog.read(in: txn, table: store.catalog) }) {
            throw ReplicationError(
                .wrongStore,
                "The store at \(store.path) is a replica of the stream '\(replica.stream)'; only a primary publishes "
                    + "its history")
        }
        // The primary's mark, so that it is never made a replica by mistake; a read-only container cannot leave it.
        guard !store.isReadOnly, let identity = PrimaryCatalog.dataFileIdentity(ofStoreIn: store.path)
        else { return }
        let mark = PrimaryCatalog(stream: stream.name, dataFile: identity, since: Date())
        try store.environment.write { txn in
            let current = try PrimaryCatalog.read(in: txn, table: store.catalog)
            guard current?.dataFile != identity || current?.stream != stream.name else { return }
            try Catalog.write(mark, key: PrimaryCatalog.key, in: txn, table: store.catalog)
        }
    }

    deinit {
        stop()
    }

    /// Where the publisher stands.
    public var status: Status {
        state.withLock { $0.status }
    }

    /// Publishes every commit the store has made that the stream does not hold, and returns when the stream
    /// acknowledged them (commits made meanwhile may go out with them, or are left to the next call).
    ///
    /// - Returns: How many messages were published.
    /// - Throws: ``ReplicationError`` for a divergence (``ReplicationError/Kind/diverged``), commits pruned before
    ///   they were published (``ReplicationError/Kind/historyGap``), a store without history or a replica, something
    ///   that cannot be replicated; `NATSError` and `JetStreamError` from the stream (the publisher
    ///   finds its place again on the next call); `KVStoreError` from the store.
    @discardableResult
    public func publishPending() throws -> Int {
        try passLock.withLock { _ in
            let store = self.store
            let history = try store.historyTable()
            let target = try store.environment.read { txn in try history?.counter(in: txn).last ?? 0 }
            var published = 0
            while true {
                let count = try publishPass()
                published += count
                let through = state.withLock { $0.tail?.publishedThrough ?? 0 }
                if count == 0 || through >= target { return published }
            }
        }
    }

    /// Starts the publisher's thread, which publishes each commit soon after it is made, and retries after failures
    /// of the connection until ``stop()``; a ``ReplicationError`` (a divergence, a history gap, something that cannot
    /// be replicated), an error of the store or a stream that does not exist stops it (see ``status``). The thread
    /// keeps the publisher alive until then.
    public func start() {
        let thread = Thread { [weak self] in self?.run() }
        let started = state.withLock { state -> Bool in
            guard !state.hasThread else { return false }
            state.hasThread = true
            state.stopRequested = false
            state.status.isRunning = true
            state.status.isStopped = false
            return true
        }
        if started {
            thread.name = "KVStore publisher \(stream.name)"
            thread.start()
        }
    }

    /// Stops the thread, and waits until it stopped (a pass under way ends first).
    public func stop() {
        state.withLock { $0.stopRequested = true }
        while state.withLock({ $0.hasThread }) { Thread.sleep(forTimeInterval: 0.002) }
    }

    private func run() {
        var delay = options.retryDelay
        while !state.withLock({ $0.stopRequested }) {
            do {
                let published = try publishPending()
                delay = options.retryDelay
                if published > 0 { state.withLock { $0.status.lastError = nil } }
                if published == 0 { Thread.sleep(forTimeInterval: options.pollInterval.seconds) }
            } catch {
                // What the connection throws is retried (a server restarting, a cluster electing a stream leader);
                // what replication found, the store, or a stream that is gone stops the thread.
                let isFatal =
                    error is ReplicationError || error is KVStoreError || JetStreamError.streamNotFound ~= error
                state.withLock { state in
                    state.status.lastError = error
                    state.status.isStopped = isFatal
                }
                if isFatal { break }
                Thread.sleep(forTimeInterval: delay.seconds)
                delay = min(delay * 2, options.retryDelay * 10)
            }
        }
        state.withLock { state in
            state.hasThread = false
            state.status.isRunning = false
        }
    }

    // MARK: - A pass

    /// One pass: finds the stream's tail if unknown, reads the commits after it (up to ``Options/commitsPerPass``),
    /// and publishes them.
    private func publishPass() throws -> Int {
        var tail = try state.withLock({ $0.tail }) ?? findTail()
        state.withLock { $0.tail = tail }
        let messages = try readGroups(after: &tail)
        guard !messages.isEmpty else { return 0 }
        do {
            try publish(messages, tail: &tail)
        } catch {
            // Where the stream stands after a failure is known from the stream only.
            state.withLock { $0.tail = nil }
            throw error
        }
        return messages.count
    }

    /// A message ready to go: its header and payload.
    private struct Outgoing {
        let header: GroupHeader
        let payload: [UInt8]
    }

    private func publish(_ messages: [Outgoing], tail: inout Tail) throws {
        let pipeline = try jetStream.makePipeline(maximumInFlight: options.maximumInFlight)
        var lastID = tail.lastMessageID
        let firstExpected = tail.lastSequence
        // With each message expecting the one before, the stream gives them the sequences after its last one, in
        // order, or refuses them.
        var groupBase = firstExpected
        for (index, message) in messages.enumerated() {
            if message.header.part == 1 { groupBase = firstExpected + UInt64(index) }
            let id = message.header.messageID(after: groupBase)
            let options =
                lastID.map { PublishOptions(messageID: id, expectedLastMessageID: $0) }
                ?? PublishOptions(messageID: id, expectedLastSequence: firstExpected)
            try pipeline.publish(
                subject: stream.subject, payload: message.payload, headers: message.header.headers, options: options)
            lastID = id
        }
        let acks = try pipeline.finish()
        guard let last = messages.last, let lastAck = acks.last else { return }
        tail.lastSequence = lastAck.sequence
        tail.lastMessageID = lastID
        tail.publishedThrough = last.header.isLastPart ? last.header.last : last.header.first - 1
        let published = tail
        state.withLock { state in
            state.tail = published
            state.status.messagesPublished += messages.count
            if let storeID = state.status.publishedToken?.storeID ?? messages.first?.header.storeID {
                state.status.publishedToken = HistoryToken(storeID: storeID, position: published.publishedThrough)
            }
        }
    }

    // MARK: - Finding the tail

    /// Reads the stream's last message and checks it against the store's history.
    private func findTail() throws -> Tail {
        let info = try jetStream.streamInfo(stream.name)
        let store = self.store
        let history = try store.historyTable()
        let (catalog, lastCommit, prunedThrough) = try store.environment.read { txn in
            let counter = try history?.counter(in: txn)
            return (try store.requireHistory(in: txn), counter?.last ?? 0, counter?.prunedThrough ?? 0)
        }
        guard let last = try jetStream.lastMessage(stream: stream.name, subject: stream.subject) else {
            // An empty stream (new, or emptied by its limits): everything the history keeps goes out.
            state.withLock {
                $0.status.publishedToken = HistoryToken(storeID: catalog.storeID, position: prunedThrough)
            }
            return Tail(publishedThrough: prunedThrough, lastSequence: info.state.lastSequence)
        }
        let header = try GroupHeader(headers: last.headers, sequence: last.sequence, stream: stream.name)
        guard header.storeID == catalog.storeID else {
            throw ReplicationError(
                .diverged,
                "The stream '\(stream.name)' holds the history of store \(header.storeID), and the store at "
                    + "\(store.path) records the history \(catalog.storeID) (another store, or its history was "
                    + "switched off and on again). Nothing was published: publish to a new stream, and bootstrap the "
                    + "replicas again from a copy of this store")
        }
        guard header.last <= lastCommit else {
            throw ReplicationError(
                .diverged,
                "The stream '\(stream.name)' holds commit \(header.last) of this store's history, and the store at "
                    + "\(store.path) has recorded \(lastCommit) commits: it was restored from an older copy, or "
                    + "another primary publishes to the stream. Nothing was published: find the primary that made "
                    + "the stream's commits, or publish to a new stream and bootstrap the replicas again")
        }
        if header.last > prunedThrough, let history {
            let stored = try store.environment.read { txn in try history.storedBytes(at: header.last, in: txn) }
            guard let stored, GroupHeader.check(of: stored) == header.check else {
                throw ReplicationError(
                    .diverged,
                    "Commit \(header.last) on the stream '\(stream.name)' is not the commit \(header.last) of the "
                        + "store at \(store.path): the store was restored from a copy and committed other changes "
                        + "since, or another primary publishes to the stream. Nothing was published: publish to a new "
                        + "stream, and bootstrap the replicas again from a copy of this store")
            }
        }
        let through = header.isLastPart ? header.last : header.first - 1
        guard through >= prunedThrough else {
            throw ReplicationError(
                .historyGap,
                "The stream '\(stream.name)' holds this store's commits through \(through), and the history of the "
                    + "store at \(store.path) no longer holds commits \(through + 1)-\(prunedThrough) (pruned "
                    + "by its retention before they were published). Nothing was published: publish to a new stream, "
                    + "and bootstrap the replicas again from a copy of this store; a longer history retention keeps "
                    + "the publisher able to catch up after an outage")
        }
        state.withLock { $0.status.publishedToken = HistoryToken(storeID: catalog.storeID, position: through) }
        return Tail(publishedThrough: through, lastSequence: info.state.lastSequence, lastMessageID: nil)
    }

    // MARK: - Reading the groups

    /// A commit as read from the history: its position, its stored bytes, and the models it changed.
    private struct Commit {
        let position: UInt64
        let bytes: [UInt8]
        let date: Date
        let models: [ModelKey]
    }

    private struct ModelKey: Hashable {
        let entity: String
        let id: UUID
    }

    /// Reads the commits after the tail and makes their messages, in one snapshot of the store.
    private func readGroups(after tail: inout Tail) throws -> [Outgoing] {
        let store = self.store
        guard let history = try store.historyTable() else {
            _ = try store.environment.read { txn in try store.requireHistory(in: txn) }
            return []
        }
        var attempt = 0
        while true {
            attempt += 1
            // Record tables are opened before the transaction; an entity added meanwhile makes the pass start again.
            let entities = try store.environment.read { txn in
                try Catalog.entities(in: txn, table: store.catalog).entities
            }
            var tables: [String: Table] = [:]
            var values: [String: CatalogExternalValues] = [:]
            let isChecked = try store.hasChecksums()
            for entity in entities {
                tables[entity.name] = try store.environment.tableIfPresent(
                    named: Catalog.recordTableName(entity.name))
                if !entity.external.isEmpty {
                    values[entity.name] = try CatalogExternalValues.open(
                        entity: entity.name, environment: store.environment, isChecked: isChecked)
                }
            }
            let through = tail.publishedThrough
            let sentCatalog = tail.sentCatalog
            var sentValues = tail.sentValues.count > Self.sentValuesLimit ? [] : tail.sentValues
            let backlog = tail.backlog.drop { $0.position <= through }
            let result = try store.environment.read {
                txn -> (
                    messages: [Outgoing], catalog: [[UInt8]: [UInt8]], sentValues: Set<ExternalValueKey>,
                    backlog: [Commit]
                )? in
                let historyCatalog = try store.requireHistory(in: txn)
                let counter = try history.counter(in: txn)
                guard counter.last > through else { return ([], sentCatalog ?? [:], sentValues, []) }
                guard through >= counter.prunedThrough else {
                    throw ReplicationError(
                        .historyGap,
                        "The history of the store at \(store.path) no longer holds commits "
                            + "\(through + 1)-\(counter.prunedThrough), which the stream '\(stream.name)' lacks "
                            + "(pruned by the retention before they were published). Publish to a new stream, and "
                            + "bootstrap the replicas again from a copy of this store")
                }
                let read = backlog.last?.position ?? through
                let commits =
                    read < counter.last
                    ? Array(backlog) + (try self.commits(read + 1...counter.last, history: history, txn: txn))
                    : Array(backlog)
                let groups = Self.groups(commits, limit: options.commitsPerPass)
                let catalogEntries = try store.replicatedCatalog(in: txn)
                let catalog = Dictionary(catalogEntries.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
                let byName = Dictionary(
                    try Catalog.entities(in: txn, table: store.catalog).entities.map { ($0.name, $0) },
                    uniquingKeysWith: { a, _ in a })
                var messages: [Outgoing] = []
                var sendsCatalog = sentCatalog != catalog
                for group in groups {
                    var items: [GroupItem] = []
                    if sendsCatalog {
                        items += catalogEntries.map { .catalogEntry(key: $0.key, value: $0.value) }
                        sendsCatalog = false
                    }
                    items += group.map { .historyEntry(position: $0.position, bytes: $0.bytes) }
                    var seen: Set<ModelKey> = []
                    for commit in group {
                        for model in commit.models where seen.insert(model).inserted {
                            // An entity a migration removed since has no records: its models are gone.
                            guard let entity = byName[model.entity] else {
                                items.append(.deletion(entity: model.entity, id: model.id))
                                continue
                            }
                            guard let table = tables[model.entity] else {
                                guard attempt < 3 else {
                                    throw KVStoreError(
                                        .damaged,
                                        message: "The store at \(store.path) has no record table for its entity "
                                            + "\(model.entity); nothing was published. Run 'kvtool check \(store.path)'"
                                    )
                                }
                                return nil
                            }
                            if let record = try txn.value(forKey: model.id.keyBytes, in: table) {
                                if let external = values[model.entity] {
                                    items += try externalItems(
                                        of: model.id, record: record, entity: entity, values: external,
                                        sent: &sentValues, in: txn)
                                }
                                items.append(.record(entity: model.entity, id: model.id, bytes: record))
                            } else {
                                items.append(.deletion(entity: model.entity, id: model.id))
                            }
                        }
                    }
                    let payloads = try GroupItem.payloads(items, limit: payloadLimit)
                    guard let first = group.first, let last = group.last else { continue }
                    for (index, payload) in payloads.enumerated() {
                        let header = GroupHeader(
                            storeID: historyCatalog.storeID, first: first.position, last: last.position,
                            part: index + 1, count: payloads.count, check: GroupHeader.check(of: last.bytes),
                            committedMicros: Int64((last.date.timeIntervalSince1970 * 1_000_000).rounded()),
                            snapshot: counter.last)
                        messages.append(Outgoing(header: header, payload: payload))
                    }
                }
                return (messages, catalog, sentValues, commits)
            }
            guard let result else { continue }
            tail.sentCatalog = result.catalog
            tail.sentValues = result.sentValues
            tail.backlog = result.backlog
            let updated = tail
            state.withLock { $0.tail = updated }
            return result.messages
        }
    }

    /// The chunks of the external values of a model's record that were not sent yet, in pieces that fit a message.
    private func externalItems(
        of id: UUID, record: [UInt8], entity: EntityCatalog, values: CatalogExternalValues,
        sent: inout Set<ExternalValueKey>, in txn: borrowing Transaction
    ) throws -> [GroupItem] {
        let decoded: RecordValue
        do {
            decoded = try record.withBorrowedBytes { try RecordValue.decode(from: $0, fields: entity.fields) }
        } catch {
            throw KVStoreError(
                .damaged,
                message: "The record of \(entity.name) \(id) in the store at \(store.path) does not decode "
                    + "(\(error)); nothing of its commit was published. Run 'kvtool check \(store.path)'")
        }
        let pieceSize = max(payloadLimit - 512, 1_024)
        var items: [GroupItem] = []
        for field in entity.external {
            guard let descriptor = ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: decoded)),
                sent.insert(ExternalValueKey(owner: id, field: field.fieldID, value: descriptor.valueID)).inserted
            else { continue }
            for index in 0..<descriptor.chunkCount {
                let chunk = try values.withChunk(
                    index, owner: id, field: (field.fieldID, field.name), value: descriptor.valueID,
                    size: descriptor.byteCount, chunkSize: descriptor.chunkSize, in: txn
                ) { Array($0) }
                let key = CatalogExternalValues.chunkKey(
                    owner: id, field: field.fieldID, value: descriptor.valueID, chunk: index)
                var offset = 0
                repeat {
                    let end = min(offset + pieceSize, chunk.count)
                    items.append(
                        .externalChunk(
                            entity: entity.name, key: key, offset: offset, total: chunk.count,
                            bytes: Array(chunk[offset..<end])))
                    offset = end
                } while offset < chunk.count
            }
        }
        return items
    }

    /// The largest payload a message carries: the server's maximum, less room for the headers.
    private var payloadLimit: Int {
        max(jetStream.connection.maximumPayload - 1_024, 4_096)
    }

    /// The commits of `positions`, with the models each changed.
    private func commits(
        _ positions: ClosedRange<UInt64>, history: HistoryTable, txn: borrowing Transaction
    ) throws -> [Commit] {
        let storeID = try store.requireHistory(in: txn).storeID
        var commits: [Commit] = []
        commits.reserveCapacity(Int(positions.count))
        for position in positions {
            guard let bytes = try history.storedBytes(at: position, in: txn) else {
                throw KVStoreError(
                    .damaged,
                    message: "The history of the store at \(store.path) lacks entry \(position), which is neither "
                        + "pruned nor past its last; run 'kvtool check \(store.path)'")
            }
            let entry = try HistoryTable.decodeStored(bytes, token: HistoryToken(storeID: storeID, position: position))
            var models: [ModelKey] = []
            var seen: Set<ModelKey> = []
            for change in entry.changes {
                let key = ModelKey(entity: change.entity, id: change.id)
                if seen.insert(key).inserted { models.append(key) }
            }
            commits.append(Commit(position: position, bytes: bytes, date: entry.date, models: models))
        }
        return commits
    }

    /// Splits commits into groups: a group ends at a commit after which no later commit changes a model it changed,
    /// so that the records read now are those the group left. Groups are taken until they hold `limit` commits (at
    /// least one group).
    private static func groups(_ commits: [Commit], limit: Int) -> [[Commit]] {
        var lastChange: [ModelKey: Int] = [:]
        for (index, commit) in commits.enumerated() {
            for model in commit.models { lastChange[model] = index }
        }
        var groups: [[Commit]] = []
        var start = 0
        var taken = 0
        while start < commits.count, taken < limit || groups.isEmpty {
            var end = start
            var index = start
            while index <= end {
                for model in commits[index].models { end = max(end, lastChange[model] ?? index) }
                index += 1
            }
            groups.append(Array(commits[start...end]))
            taken += end - start + 1
            start = end + 1
        }
        return groups
    }
}

extension Duration {
    /// The duration in seconds, for `Thread.sleep(forTimeInterval:)`.
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
