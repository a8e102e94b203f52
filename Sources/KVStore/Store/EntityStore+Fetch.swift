import Foundation
import LMDB

extension EntityStore {
    /// The planner's view of the entity's indexes, the record key first (``QueryPlan/recordKey``): a unique index on
    /// `id` whose keys are the IDs' bytes, so that equality and `contains` on `id` read the records directly, and
    /// win a tie with any other index.
    static func plannerIndexes(of indexes: [StoredIndex]) -> [PlannerIndex] {
        [PlannerIndex.recordKey(of: M.self)]
            + indexes.map { index in
                var planned = PlannerIndex(
                    name: index.description.name, keyPaths: index.description.keyPaths,
                    isUnique: index.description.isUnique, isMultiEntry: index.description.isMultiEntry,
                    encodeComponents: index.description.componentEncoders)
                planned.hasExactEquality = index.description.hasExactEquality
                planned.hasExactOrder = index.description.hasExactOrder
                planned.hasExactOrderBelowNaN = index.description.hasExactOrderBelowNaN
                planned.componentTraits = index.description.componentTraits
                return planned
            }
    }

    /// Plans a fetch: an equality on an attribute from the template of its attribute (``EqualityPlans``), equalities
    /// and comparisons joined by `&&` from the template of their shape (``ComparisonPlans``), anything else in full.
    func plan(_ descriptor: FetchDescriptor<M>) -> PlannedQuery {
        equalityPlans.plan(
            predicate: descriptor.predicate, expression: descriptor.predicateExpression, sortBy: descriptor.sortBy,
            fetchLimit: descriptor.fetchLimit, fetchOffset: descriptor.fetchOffset, indexes: plannerIndexes
        ) {
            comparisonPlans.plan(
                predicate: descriptor.predicate, expression: descriptor.predicateExpression,
                sortBy: descriptor.sortBy, fetchLimit: descriptor.fetchLimit, fetchOffset: descriptor.fetchOffset,
                indexes: plannerIndexes)
        }
    }

    /// The models that match `descriptor`, sorted, offset and limited.
    func fetch(_ descriptor: FetchDescriptor<M>, in txn: borrowing Transaction) throws -> [M] {
        let planned = try plan(descriptor, in: txn)
        let reader = self.reader
        let offset = max(descriptor.fetchOffset, 0)
        // Sorted candidates can stop as soon as the page is full; others are all read, then sorted.
        let wanted = planned.isSorted || descriptor.sortBy.isEmpty ? descriptor.fetchLimit.map { offset + $0 } : nil
        if wanted == 0 { return [] }
        let results = sinkType.init()
        if case .scan = planned.plan, let predicate = descriptor.predicate, !planned.isExact {
            try forEachScanMatch(
                of: predicate, filter: storedFieldFilter(of: predicate), in: txn, reader: reader,
                restart: { results.removeAll() }
            ) { model, _ in
                let count = results.append(try model())
                return wanted.map { count < $0 } ?? true
            }
            return descriptor.sortedPage(of: results.take(), alreadySorted: planned.isSorted)
        }
        let matcher = planned.isExact ? nil : descriptor.predicate.map(candidateMatcher)
        try forEachCandidate(planned.plan, in: txn, reader: reader, matching: matcher) { model in
            let count = results.append(model)
            return wanted.map { count < $0 } ?? true
        }
        return descriptor.sortedPage(of: results.take(), alreadySorted: planned.isSorted)
    }

    /// The matcher of the candidates of a plan that does not answer `predicate` exactly: through the stored-field
    /// test when the entity allows it (``Entity/testsStoredFields``) and the predicate compiles.
    func candidateMatcher(_ predicate: Predicate<M>) -> CandidateMatcher<M> {
        CandidateMatcher(predicate) { [self] in storedFieldFilter(of: predicate) }
    }

    /// `predicate` compiled into a test of the records' stored fields, when the entity allows it
    /// (``Entity/testsStoredFields``) and the predicate is of the shapes ``StoredFieldFilter`` compiles: then it reads
    /// top-level stored attributes only.
    func storedFieldFilter(of predicate: Predicate<M>) -> StoredFieldFilter<M>? {
        guard testsStoredFields else { return nil }
        return StoredFieldFilter<M>.compile(predicate, fieldName: storedFieldName, fields: reader.fields)
    }

    /// The number of models that match `descriptor`, ignoring its sort, offset and limit: read from the index (or
    /// the indexes of a union), without reading a model, when the plan answers the predicate exactly
    /// (``PlannedQuery/isExact``).
    func count(_ descriptor: FetchDescriptor<M>, in txn: borrowing Transaction) throws -> Int {
        // Its expression compared with nil: unwrapping the optional predicate copies it, through a run-time lookup of
        // its type, and even comparing it with nil looks its type up; the paths that need it unwrap it.
        if descriptor.predicateExpression == nil { return try txn.count(of: records) }
        var count = 0
        let planned = try plan(descriptor, in: txn)
        if planned.isExact, case .range(let name, let lower, let upper, _) = planned.plan {
            return try countEntries(inRange: name, lower: lower, upper: upper, in: txn)
        }
        if planned.isExact, case .keys(let name, let keys) = planned.plan {
            if name == QueryPlan.recordKey {
                for key in keys where try isStored(key, in: txn) { count += 1 }
                return count
            }
            let index = try storedIndex(name)
            if index.description.isMultiEntry, keys.count > 1 {
                // A model whose array holds several of the elements is under several keys: each counts once.
                return try distinctIDCount(of: [planned.plan], in: txn)
            }
            for key in keys {
                count += try IndexCandidates.count(
                    underKey: IndexKey.finalized(key, hash: longKeyHash), in: index.table,
                    isUnique: index.description.isUnique, txn: txn)
            }
            return count
        }
        if planned.isExact, case .union(let parts) = planned.plan {
            return try distinctIDCount(of: parts, in: txn)
        }
        if case .scan = planned.plan, !planned.isExact, let predicate = descriptor.predicate {
            try forEachScanMatch(
                of: predicate, filter: storedFieldFilter(of: predicate), in: txn, reader: reader,
                restart: { count = 0 }
            ) { _, _ in
                count += 1
                return true
            }
            return count
        }
        var matcher: CandidateMatcher<M>?
        if !planned.isExact, let predicate = descriptor.predicate { matcher = candidateMatcher(predicate) }
        try forEachCandidate(planned.plan, in: txn, reader: reader, matching: matcher) { _ in
            count += 1
            return true
        }
        return count
    }

    /// How many distinct IDs `plans` (keys or ranges of indexes) find together.
    ///
    /// - Throws: What LMDB throws; ``KVStoreError/invalidModel`` for another kind of plan.
    private func distinctIDCount(of plans: [QueryPlan], in txn: borrowing Transaction) throws -> Int {
        var ids = Set<UUID>()
        for plan in plans {
            try forEachID(of: plan, in: txn) { id in
                ids.insert(id)
                return true
            }
        }
        return ids.count
    }

    /// Scans the records and calls `body` with each one `predicate` matches, until it returns false; `body` decodes
    /// the model by calling the function it is given (a count does not), and gets the record's bytes beside it.
    ///
    /// With `filter`, the predicate compiled (``storedFieldFilter(of:)``), it is tested on the records' fields, and
    /// only the records it matches are decoded; without, every record is decoded and the predicate evaluated. The
    /// test relies on each attribute it reads being stored under its property's name as the property's value (see
    /// ``Entity/testsStoredFields``), and the scan checks that against the decoded model on the first
    /// ``checkedRecords`` records it tests and on every match: a record whose fields disagree with its model turns
    /// the test off, and when the test had already passed over records unchecked, `restart` is called and the scan
    /// starts again, decoding every record. A record the test cannot read (a missing field, a value of another type,
    /// damaged bytes) is decoded, and its decoding reports what is wrong.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when a record does not decode, what the predicate throws, what
    ///   `body` throws.
    func forEachScanMatch(
        of predicate: Predicate<M>, filter: StoredFieldFilter<M>?, in txn: borrowing Transaction,
        reader: RecordReader, restart: () -> Void,
        _ body: (_ model: () throws -> M, _ record: BorrowedBytes) throws -> Bool
    ) throws {
        // The test outside the filter, so that a record's test copies nothing; not through `??`, whose generic
        // closure would wrap the test in two conversion thunks called at every record.
        let test: StoredFieldTest
        if let filter { test = filter.test } else { test = { _ in nil } }
        var state = ScanState(isTesting: filter != nil)
        try txn.scanEntries(records) { key, value in
            // Only the common case here, a record the trusted test rejects; the others are decoded by functions of
            // their own, so that this closure has no value of the model's type, whose stack space it would otherwise
            // reserve at every record (the type's size being known only at run time).
            if state.isTesting, let fields = StoredRecordFields(record: value), let verdict = test(fields) {
                if !verdict, state.checked >= Self.checkedRecords {
                    state.passedOverUnchecked = true
                    return true
                }
                return try visit(
                    value, key: key, fields: fields, verdict: verdict, filter: filter, predicate: predicate,
                    reader: reader, state: &state, body)
            }
            return try visit(value, key: key, predicate: predicate, reader: reader, body)
        }
        guard state.mustRestart else { return }
        restart()
        try txn.scanEntries(records) { key, value in
            try visit(value, key: key, predicate: predicate, reader: reader, body)
        }
    }

    /// What a scan with a stored-field test knows as it goes (``forEachScanMatch(of:filter:in:reader:restart:_:)``).
    struct ScanState {
        /// Whether the records are still tested: false once a record's fields disagreed with its model.
        var isTesting: Bool
        /// How many records the test was checked on against their decoded models.
        var checked = 0
        /// Whether the test passed over a record without its model being decoded.
        var passedOverUnchecked = false
        /// Whether the scan must start again, decoding every record.
        var mustRestart = false
    }

    /// Decodes a record the stored-field test gave `verdict` on and checks the test against the model: a model
    /// whose values agree goes to `body` when the verdict was true; one that disagrees turns the test off (and
    /// makes the scan restart when it had passed over records unchecked) and is evaluated by `predicate`.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when the record does not decode, what the predicate and `body`
    ///   throw.
    @inline(never)
    private func visit(
        _ value: BorrowedBytes, key: BorrowedBytes, fields: StoredRecordFields, verdict: Bool,
        filter: StoredFieldFilter<M>?, predicate: Predicate<M>, reader: RecordReader, state: inout ScanState,
        _ body: (_ model: () throws -> M, _ record: BorrowedBytes) throws -> Bool
    ) throws -> Bool {
        let model = try decode(value, key: key, reader: reader)
        if filter?.readsSameValues(in: fields, as: model) == true {
            state.checked += 1
            return try verdict ? body({ model }, value) : true
        }
        state.isTesting = false
        if state.passedOverUnchecked {
            state.mustRestart = true
            return false
        }
        return try predicate.evaluate(model) ? body({ model }, value) : true
    }

    /// Decodes a record and evaluates `predicate` on its model, which goes to `body` when it matches.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when the record does not decode, what the predicate and `body`
    ///   throw.
    @inline(never)
    private func visit(
        _ value: BorrowedBytes, key: BorrowedBytes, predicate: Predicate<M>, reader: RecordReader,
        _ body: (_ model: () throws -> M, _ record: BorrowedBytes) throws -> Bool
    ) throws -> Bool {
        let model = try decode(value, key: key, reader: reader)
        return try predicate.evaluate(model) ? body({ model }, value) : true
    }

    /// How many records a scan's stored-field test is checked on before it is trusted with the records it does not
    /// match (see ``forEachScanMatch(of:in:reader:restart:_:)``).
    static var checkedRecords: Int { 32 }

    /// The IDs of the models that match `descriptor`, in its order, offset and limited: read from the index, without
    /// reading a model, when the plan answers the predicate exactly and yields its matches in the descriptor's order;
    /// from the models otherwise.
    func identifiers(_ descriptor: FetchDescriptor<M>, in txn: borrowing Transaction) throws -> [UUID] {
        let planned = try plan(descriptor, in: txn)
        guard descriptor.predicate != nil, planned.isExact, planned.isSorted else {
            return try fetch(descriptor, in: txn).map(\.id)
        }
        let offset = max(descriptor.fetchOffset, 0)
        let wanted = descriptor.fetchLimit.map { offset + max($0, 0) }
        var ids: [UUID] = []
        var seen = Set<UUID>()
        func take(_ id: UUID) -> Bool {
            appendOnce(id, to: &ids, seen: &seen)
            return wanted.map { ids.count < $0 } ?? true
        }
        switch planned.plan {
        case .range(let name, let lower, let upper, let reverse):
            try forEachID(inRange: name, lower: lower, upper: upper, reverse: reverse, in: txn, take)
        case .keys(let name, let keys):
            try appendIDs(under: keys, of: name, in: txn, take)
        case .union(let parts):
            // The parts in order, each ID once, as a fetch reads their models.
            for part in parts where wanted.map({ ids.count < $0 }) ?? true {
                try forEachID(of: part, in: txn, take)
            }
        case .scan, .ordered, .intersection:
            return try fetch(descriptor, in: txn).map(\.id)
        }
        return Array(ids.dropFirst(offset))
    }

    /// Calls `take` with the IDs under each of `keys` of the index `name` (the record key's: the IDs stored), in key
    /// order, until it returns false.
    private func appendIDs(
        under keys: [[UInt8]], of name: String, in txn: borrowing Transaction, _ take: (UUID) -> Bool
    ) throws {
        if name == QueryPlan.recordKey {
            for key in keys where try isStored(key, in: txn) {
                guard take(key.withBorrowedBytes { UUID(bytes: $0) }) else { break }
            }
        } else {
            let index = try storedIndex(name)
            for key in keys {
                let goesOn = try IndexCandidates.forEachID(
                    underKey: IndexKey.finalized(key, hash: longKeyHash), in: index.table,
                    isUnique: index.description.isUnique, txn: txn, take)
                guard goesOn else { break }
            }
        }
    }

    /// Whether a record is stored under the record key `key`, looked up without decoding it.
    private func isStored(_ key: [UInt8], in txn: borrowing Transaction) throws -> Bool {
        try key.withBorrowedBytes { try txn.bytes(forKey: $0, in: records) != nil }
    }

    /// Calls `body` with each candidate model of a plan, in the plan's order, until `body` returns false; with a
    /// `matcher`, with the candidates it finds matching only. A model reached through several keys of a multi-entry
    /// index is visited once.
    func forEachCandidate(
        _ plan: QueryPlan,
        in txn: borrowing Transaction,
        reader: RecordReader,
        matching matcher: CandidateMatcher<M>? = nil,
        _ body: (M) throws -> Bool
    ) throws {
        // Visiting a candidate without returning it as an optional: code generic over the model looks up the
        // optional's type metadata at every call that does.
        /// Calls `receive` (`body`, unless a plan gathers its models first) with the model in `bytes`, stored under
        /// `id`, unless the matcher rejects it; returns whether to go on.
        func visit(_ bytes: BorrowedBytes, id: UUID, to receive: (M) throws -> Bool) throws -> Bool {
            let model = try decode(bytes, id: id, reader: reader)
            if let matcher, try !matcher.matches(model, record: bytes) { return true }
            return try receive(model)
        }
        /// Calls `receive` with the candidate stored under `id`, if there is one; returns whether to go on.
        func visit(_ id: UUID, to receive: (M) throws -> Bool) throws -> Bool {
            guard let bytes = try withKey(id, { key in try txn.bytes(forKey: key, in: records) }) else { return true }
            return try visit(bytes, id: id, to: receive)
        }
        switch plan {
        case .scan:
            try txn.scanEntries(records) { key, value in try visit(value, id: UUID(bytes: key), to: body) }
        case .union(let plans):
            // Each model once: one that several parts reach comes with the first.
            var seen = Set<UUID>()
            var goesOn = true
            for part in plans where goesOn {
                try forEachCandidate(part, in: txn, reader: reader, matching: matcher) { model in
                    guard seen.insert(model.id).inserted else { return true }
                    goesOn = try body(model)
                    return goesOn
                }
            }
        case .intersection(let plans):
            // The IDs every part finds, read in key order.
            var ids: Set<UUID>?
            for part in plans {
                var found = Set<UUID>()
                try forEachID(of: part, in: txn) { id in
                    if ids?.contains(id) ?? true { found.insert(id) }
                    return true
                }
                ids = found
            }
            for id in (ids ?? []).sorted(by: { $0.isOrdered(before: $1) }) where try !visit(id, to: body) { return }
        case .keys(QueryPlan.recordKey, let keys):
            // The planner sorted the IDs' bytes and removed duplicates: the lookups run in key order.
            for key in keys where try !visit(key.withBorrowedBytes { UUID(bytes: $0) }, to: body) { return }
        case .keys(let name, let keys):
            let index = try storedIndex(name)
            var ids: [UUID] = []
            var seen = Set<UUID>()
            // The IDs under one key are distinct: only several keys (of a multi-entry index, or cut ones) can repeat one.
            let isOneKey = keys.count == 1
            for key in keys {
                // A cut key's group in a unique index may hold several owners, of values that differ after the cut:
                // all are candidates, and the predicate keeps the right ones.
                try IndexCandidates.forEachID(
                    underKey: IndexKey.finalized(key, hash: longKeyHash), in: index.table,
                    isUnique: index.description.isUnique, txn: txn
                ) { id in
                    if isOneKey { ids.append(id) } else { appendOnce(id, to: &ids, seen: &seen) }
                    return true
                }
            }
            for id in ids where try !visit(id, to: body) { return }
        case .range(let name, let lower, let upper, let reverse):
            // Only ranges of numbers and dates are taken as sorted (QueryPlanner.isByteOrdered), whose keys are never
            // cut: the candidates go to `body` as the index gives them, and a sorted fetch stops when it has enough.
            try forEachID(inRange: name, lower: lower, upper: upper, reverse: reverse, in: txn) { id in
                try visit(id, to: body)
            }
        case .ordered(let name, let reverse):
            // Only keys of numbers and dates are read in order (QueryPlanner.isByteOrdered), and LMDB's limit never
            // cuts those. Foundation's sort is stable and a scan reads in ID order, so models that tie on the sort
            // come in ID order: the models of one key do so in a forward read, and a reverse read gives them
            // backwards, so there they are gathered and put in ID order.
            let table = try storedIndex(name).table
            guard reverse else {
                try txn.scanEntries(table) { _, value in try visit(UUID(bytes: value), to: body) }
                return
            }
            var run: (key: [UInt8], models: [M])?
            func flush() throws -> Bool {
                guard let pending = run else { return true }
                run = nil
                for model in pending.models.reversed() where try !body(model) { return false }
                return true
            }
            var goesOn = true
            try txn.scanEntries(table, reverse: true) { indexKey, value in
                try visit(UUID(bytes: value)) { model in
                    if run.map({ !$0.key.elementsEqual(indexKey) }) ?? true {
                        goesOn = try flush()
                        guard goesOn else { return false }
                        run = (Array(indexKey), [])
                    }
                    run?.models.append(model)
                    return true
                }
            }
            if goesOn { _ = try flush() }
        }
    }

    /// Calls `body` with each ID a part of an intersection or of a union finds: the IDs under keys of an index (or
    /// the record key's, those stored) or in a range of one.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` for another kind of plan, which neither ever holds.
    func forEachID(of plan: QueryPlan, in txn: borrowing Transaction, _ body: (UUID) -> Bool) throws {
        switch plan {
        case .keys(let name, let keys):
            try appendIDs(under: keys, of: name, in: txn, body)
        case .range(let name, let lower, let upper, let reverse):
            try forEachID(inRange: name, lower: lower, upper: upper, reverse: reverse, in: txn, body)
        case .scan, .ordered, .union, .intersection:
            throw KVStoreError(
                .invalidModel, entity: name, message: "A part of an intersection or a union reads keys or a range")
        }
    }

    /// Calls `body` with the ID of each entry of the index `name` between two bounds, in key order (from the upper
    /// end when `reverse`, the IDs of one key still in ascending order, as a stable sort of a scan leaves models that
    /// tie), each ID once, until `body` returns false. Only a multi-entry index can give an ID twice, and only its IDs
    /// are remembered to pass over repeats.
    ///
    /// A bound that was cut is widened to every key of its prefix: cut keys sharing a prefix sort by hash, not by
    /// value. A plan that reads cut keys is not exact, and the predicate, evaluated on every candidate, keeps the
    /// right ones.
    func forEachID(
        inRange name: String, lower: QueryPlan.Bound?, upper: QueryPlan.Bound?, reverse: Bool = false,
        in txn: borrowing Transaction, _ body: (UUID) throws -> Bool
    ) throws {
        let index = try storedIndex(name)
        let table = index.table
        // Constants, not variables: the functions below capture them, and a captured variable is checked for
        // exclusive access at every use, twice an entry.
        let (lowerKey, lowerInclusive) = storedBound(lower, isLower: true)
        let (upperKey, upperInclusive) = storedBound(upper, isLower: false)
        func isAboveLower(_ indexKey: BorrowedBytes) -> Bool {
            guard let lowerKey else { return true }
            let order = compareBytes(indexKey, lowerKey)
            return order > 0 || (order == 0 && lowerInclusive)
        }
        func isBelowUpper(_ indexKey: BorrowedBytes) -> Bool {
            guard let upperKey else { return true }
            let order = compareBytes(indexKey, upperKey)
            return order < 0 || (order == 0 && upperInclusive)
        }
        // Only a multi-entry index holds a model under several keys; in the others each model has one entry.
        let mayRepeat = index.description.isMultiEntry
        var seen = Set<UUID>()
        guard reverse else {
            try txn.scanEntries(table, in: KeyRange(from: lowerKey, upTo: nil)) { indexKey, value in
                guard isBelowUpper(indexKey) else { return false }
                guard isAboveLower(indexKey) else { return true }
                let id = UUID(bytes: value)
                guard !mayRepeat || seen.insert(id).inserted else { return true }
                return try body(id)
            }
            return
        }
        // From the upper end down, the IDs of each key gathered and given in ascending order.
        // Past every key that begins with the upper bound (none when the bound is all 0xFF bytes: from the last key).
        let end = upperKey.flatMap { KeyRange.successor(ofPrefix: $0) }
        var run: (key: [UInt8], ids: [UUID])?
        var goesOn = true
        func flush() throws {
            guard let pending = run else { return }
            run = nil
            for id in pending.ids.reversed() where goesOn && (!mayRepeat || seen.insert(id).inserted) {
                goesOn = try body(id)
            }
        }
        try txn.scanEntries(table, in: KeyRange(from: nil, upTo: end), reverse: true) { indexKey, value in
            guard isAboveLower(indexKey) else { return false }
            guard isBelowUpper(indexKey) else { return true }
            if run.map({ !$0.key.elementsEqual(indexKey) }) ?? true {
                try flush()
                guard goesOn else { return false }
                run = (Array(indexKey), [])
            }
            run?.ids.append(UUID(bytes: value))
            return true
        }
        if goesOn { try flush() }
    }

    /// The stored key of a range's `bound` and whether it is inclusive: a key cut to its prefix and hash
    /// (``IndexKey/isGrouped(_:)``) bounds, inclusively, the group of every key cut the same way.
    private func storedBound(_ bound: QueryPlan.Bound?, isLower: Bool) -> (key: [UInt8]?, isInclusive: Bool) {
        guard let bound else { return (nil, true) }
        let key = IndexKey.finalized(bound.key, hash: longKeyHash)
        guard IndexKey.isGrouped(key) else { return (key, bound.isInclusive) }
        let group = IndexKey.prefixGroup(of: key)
        return (isLower ? group.lower : group.upper, true)
    }

    /// The index named `name`.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` when the entity has none.
    func storedIndex(_ name: String) throws -> StoredIndex {
        guard let position = indexPositions[name] else {
            throw KVStoreError(.invalidModel, entity: self.name, message: "\(self.name) has no index named \(name)")
        }
        return indexes[position]
    }

    /// Up to `limit` models that `matches` accepts, read in key order after the key `after` (from the start when
    /// `nil`), with the last key read so that the next page resumes there. Walking a table page by page, each page in
    /// a transaction of its own, keeps memory and transactions short whatever the table's size.
    ///
    /// - Returns: The models, the last key read (`after` when nothing was read), and whether the table ended.
    func page(
        after: [UInt8]?,
        limit: Int,
        in txn: borrowing Transaction,
        where matches: (M) throws -> Bool = { _ in true }
    ) throws -> (models: [M], lastKey: [UInt8]?, isLast: Bool) {
        let reader = self.reader
        var models: [M] = []
        var last = after
        var isLast = true
        try txn.scanEntries(records, in: after.map { KeyRange.from($0) } ?? .all) { key, value in
            if let after, compareBytes(key, after) == 0 { return true }
            last = Array(key)
            let model = try decode(value, key: key, reader: reader)
            if try matches(model) { models.append(model) }
            if models.count < limit { return true }
            isLast = false
            return false
        }
        return (models, last, isLast)
    }

    /// The models stored under `ids`, in the order of `ids`, with `nil` for IDs that have none. The lookups run in
    /// key order, which keeps them close together in the B+tree.
    func models(for ids: [UUID], in txn: borrowing Transaction) throws -> [M?] {
        let reader = self.reader
        let order = keyOrder(of: ids)
        var results = [M?](repeating: nil, count: ids.count)
        for position in order {
            let id = ids[position]
            if let bytes = try withKey(id, { key in try txn.bytes(forKey: key, in: records) }) {
                results[position] = try decode(bytes, id: id, reader: reader)
            }
        }
        return results
    }
}

private func appendOnce(_ id: UUID, to ids: inout [UUID], seen: inout Set<UUID>) {
    if seen.insert(id).inserted { ids.append(id) }
}

/// Compares bytes as LMDB's default comparator does: lexicographically, a prefix first.
func compareBytes(_ lhs: BorrowedBytes, _ rhs: [UInt8]) -> Int {
    rhs.withBorrowedBytes { rhs in lhs.compare(rhs) }
}

extension EntityStore where M: PersistentModel {
    /// The models a fetch of `descriptor` reads, unsorted and unpaged: all of them match when `isExact`, and the
    /// caller evaluates the predicate on them otherwise. A scan `keepingRecords` gives each model's record too
    /// (`records`, in the same order; empty otherwise), which a context keeps as the model's encoding as fetched
    /// rather than encoding it again.
    ///
    /// A predicate the plan's index answers needs nothing more. One that compiles into a test of stored fields
    /// (``storedFieldFilter(of:)``) reads top-level attributes only, whose values a model has as soon as it is
    /// decoded: its candidates are tested here as a struct's are, and the result is exact. Any other predicate is
    /// left to the caller: a context's fetch of ``PersistentModel`` classes evaluates it once the objects are in the
    /// context, where their relationship properties read.
    ///
    /// The objects come as `AnyObject`s: code generic over the model appends to an array of a concrete type without
    /// looking up the array type's metadata for every object, which an array of `M` costs (about a tenth of a
    /// fetched object's time). Optional ones, so that the caller can take each out (`take()`) rather than copy it:
    /// a copy costs a retain, and the array's release a release, of every object fetched.
    func candidates(
        _ descriptor: FetchDescriptor<M>, keepingRecords: Bool, in txn: borrowing Transaction
    ) throws -> (objects: [AnyObject?], records: [[UInt8]], isExact: Bool) {
        let planned = try plan(descriptor.unpaged, in: txn)
        let predicate = planned.isExact ? nil : descriptor.predicate
        let filter = predicate.flatMap(storedFieldFilter)
        let isExact = predicate == nil || filter != nil
        var models: [AnyObject?] = []
        var records: [[UInt8]] = []
        let reader = self.reader
        if case .scan = planned.plan {
            guard let predicate, let filter else {
                try txn.scanEntries(self.records) { key, value in
                    models.append(try decode(value, key: key, reader: reader))
                    if keepingRecords { records.append(Array(value)) }
                    return true
                }
                return (models, records, isExact)
            }
            try forEachScanMatch(
                of: predicate, filter: filter, in: txn, reader: reader,
                restart: { (models, records) = ([], []) }
            ) { model, record in
                models.append(try model())
                if keepingRecords { records.append(Array(record)) }
                return true
            }
            return (models, records, isExact)
        }
        let matcher = predicate.flatMap { predicate in filter.map { CandidateMatcher(predicate, filter: $0) } }
        try forEachCandidate(planned.plan, in: txn, reader: reader, matching: matcher) { model in
            models.append(model)
            return true
        }
        return (models, [], isExact)
    }
}
