import Foundation
import LMDB

/// How an aggregate reads the store (``EntityStore/aggregateRead(_:predicate:grouped:)``), from the cheapest.
enum AggregateRead: Equatable {
    /// Keys of an index and their counts of entries, decoded into the attribute's values: no record is read.
    case index(String)
    /// The records the plan finds, each read for the one or two attributes needed: no model is built.
    case records(QueryPlan)
    /// The models the plan finds, decoded, the predicate evaluated on each.
    case models(QueryPlan)
}

/// How a grouped aggregate tells a model's groups: the value of an attribute, or each element of an array attribute.
struct AggregateGrouping<M: StoredModel, G: Hashable> {
    /// The attribute grouped by.
    let keyPath: PartialKeyPath<M> & Sendable
    /// The groups of a model.
    let groups: (M) -> [G]
    /// The groups of a record, read from its field `name`; `nil` when the record has no value of the attribute's type
    /// there (the caller decodes the model then).
    let storedGroups: (borrowing FieldReader, String) throws -> [G]?

    /// Groups by the value of `keyPath`, `nil` a group of its own for an optional attribute.
    static func value(_ keyPath: KeyPath<M, G> & Sendable) -> Self {
        let reader = TypedReaders<G>.fieldReader()
        return Self(
            keyPath: keyPath, groups: { [$0[keyPath: keyPath]] },
            storedGroups: { fields, name in try StoredValue.read(fields, name: name, with: reader).map { [$0] } })
    }

    /// Groups by each element of `keyPath`: a model is in the group of every element it holds, and in none when the
    /// array is empty.
    static func elements(_ keyPath: KeyPath<M, [G]> & Sendable) -> Self {
        let reader = TypedReaders<[G]>.fieldReader()
        return Self(
            keyPath: keyPath, groups: { Array(Set($0[keyPath: keyPath])) },
            storedGroups: { fields, name in
                try StoredValue.read(fields, name: name, with: reader).map { Array(Set($0)) }
            })
    }
}

extension EntityStore {
    // MARK: - Choosing

    /// How an aggregate of `aggregate` over the models `predicate` matches reads the store.
    func aggregateRead<R>(_ aggregate: Aggregate<M, R>, predicate: Predicate<M>?, grouped: Bool) -> AggregateRead {
        let planned = plan(FetchDescriptor(predicate: predicate))
        guard planned.isExact || predicate == nil else { return .models(planned.plan) }
        if !grouped, let index = aggregateIndex(for: aggregate, plan: predicate == nil ? nil : planned.plan) {
            return .index(index.description.name)
        }
        return .records(planned.plan)
    }

    /// The index an aggregate can read alone: non-unique, on its attribute only, with keys that decode into the
    /// attribute's values and compare as the aggregate needs (equal keys for equal values, or for a minimum and a
    /// maximum keys in the values' order), and read whole or in the range or keys of an exact `plan` on it.
    private func aggregateIndex<R>(for aggregate: Aggregate<M, R>, plan: QueryPlan?) -> StoredIndex? {
        guard let keyPath = aggregate.keyPath,
            let index = indexes.first(where: {
                !$0.description.isUnique && !$0.description.isMultiEntry && $0.description.isDerivable
                    && $0.description.keyPaths.count == 1 && $0.description.keyPaths[0] == keyPath
            }),
            IndexKeyValues.isReadable(type(of: keyPath).valueType)
        else { return nil }
        switch aggregate.operation {
        case .minimum, .maximum:
            guard IndexKeyValues.isOrdered(type(of: keyPath).valueType) else { return nil }
        case .count, .sum, .average, .distinct:
            guard index.description.hasExactEquality else { return nil }
        }
        switch plan {
        case nil: return index
        case .range(let name, _, _, _), .keys(let name, _): return name == index.description.name ? index : nil
        case .scan, .ordered, .union, .intersection: return nil
        }
    }

    /// The name under which records store the attribute at `keyPath` when the aggregate may read it from the record
    /// instead of decoding the model: a top-level stored property (not computed, not a nested path), not external.
    /// A record that holds nothing of the attribute's type under that name is decoded instead, and the first record
    /// read is checked against its decoded model, so that a property stored under another name (custom
    /// `CodingKeys`) is caught and the aggregate decodes models.
    func storedFieldName(of keyPath: AnyKeyPath) -> String? {
        storedFieldNames.value(for: keyPath) { keyPath in
            guard !ModelIndex<M>.isComputed(keyPath) else { return nil }
            let name = ModelIndex<M>.fieldName(of: keyPath)
            guard !name.contains("."), !externalAttributes.contains(where: { $0.name == name }) else { return nil }
            return name
        }
    }

    /// A description of how an aggregate reads, for ``ModelContext/explain(_:matching:)``.
    func describe(_ read: AggregateRead) -> String {
        switch read {
        case .index(let name): "index \(name) keys"
        case .records(let plan):
            "records of "
                + QueryPlanner.describe(plan, uniqueIndexes: QueryPlanner.uniqueIndexes(of: plan, in: plannerIndexes))
        case .models(let plan):
            "models of "
                + QueryPlanner.describe(plan, uniqueIndexes: QueryPlanner.uniqueIndexes(of: plan, in: plannerIndexes))
        }
    }

    // MARK: - Reading

    /// Adds to `state` the models that `predicate` matches, but for those in `excluded` (the context adds its own
    /// versions of those).
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when a record does not decode, ``KVStoreError/overflow`` from an
    ///   integer sum, what the predicate throws.
    func aggregate<R>(
        _ aggregate: Aggregate<M, R>, into state: AggregateState<M, R>, predicate: Predicate<M>?,
        excluding excluded: Set<UUID>, in txn: borrowing Transaction
    ) throws {
        if aggregate.operation == .count, excluded.isEmpty {
            (state as? CountState<M>)?.add(counted: try count(FetchDescriptor(predicate: predicate), in: txn))
            return
        }
        let read = aggregateRead(aggregate, predicate: predicate, grouped: false)
        if case .index(let name) = read {
            let planned = plan(FetchDescriptor(predicate: predicate))
            try aggregateIndex(
                name, operation: aggregate.operation, plan: predicate == nil ? nil : planned.plan, into: state,
                excluding: excluded, in: txn)
            return
        }
        let name = aggregate.keyPath.flatMap(storedFieldName)
        var checked = false
        var readsRecords = name != nil || aggregate.keyPath == nil
        // One reader for every record: each made anew would allocate its decoder's buffers and copy the field table.
        let reader = self.reader
        try forEachMatch(of: predicate, read: read, excluding: excluded, in: txn) { id, bytes in
            if readsRecords {
                let added = try readRecord(bytes, id: id, reader: reader) { fields in
                    guard let name else { return try state.add(from: fields, name: "", count: 1) }
                    guard checked else { return false }
                    return try state.add(from: fields, name: name, count: 1)
                }
                if added { return }
            }
            let model = try decode(bytes, id: id, reader: reader)
            if readsRecords, !checked, let name {
                // The first record: read both ways, and decode models from here on if they differ.
                checked = true
                readsRecords = try readRecord(bytes, id: id, reader: reader) {
                    try state.readsSameValue(from: $0, name: name, as: model)
                }
            }
            try state.add(model)
        } model: { model in
            try state.add(model)
        }
    }

    /// Adds the models that `predicate` matches to the state of each of their groups, made with `makeState`, but for
    /// those in `excluded`.
    ///
    /// - Throws: What ``aggregate(_:into:predicate:excluding:in:)`` throws.
    func aggregate<R, G>(
        _ aggregate: Aggregate<M, R>, groupedBy grouping: AggregateGrouping<M, G>,
        into groups: inout [G: AggregateState<M, R>],
        predicate: Predicate<M>?, excluding excluded: Set<UUID>, in txn: borrowing Transaction
    ) throws {
        func state(_ group: G) -> AggregateState<M, R> {
            if let state = groups[group] { return state }
            let state = aggregate.makeState()
            groups[group] = state
            return state
        }
        func add(_ model: M) throws {
            for group in grouping.groups(model) { try state(group).add(model) }
        }
        let read = aggregateRead(aggregate, predicate: predicate, grouped: true)
        let valueName = aggregate.keyPath.map(storedFieldName)
        let groupName = storedFieldName(of: grouping.keyPath)
        var checked = false
        var readsRecords = groupName != nil && valueName != .some(nil)
        let reader = self.reader
        try forEachMatch(of: predicate, read: read, excluding: excluded, in: txn) { id, bytes in
            if readsRecords, checked, let groupName {
                let added = try readRecord(bytes, id: id, reader: reader) { fields in
                    guard let keys = try grouping.storedGroups(fields, groupName) else { return false }
                    // Read the value once, into the first group's state; the others get it from the model.
                    guard keys.count == 1, let key = keys.first else { return keys.isEmpty }
                    return try state(key).add(from: fields, name: valueName.flatMap { $0 } ?? "", count: 1)
                }
                if added { return }
            }
            let model = try decode(bytes, id: id, reader: reader)
            if readsRecords, !checked, let groupName {
                checked = true
                let probe = aggregate.makeState()
                readsRecords = try readRecord(bytes, id: id, reader: reader) { fields in
                    let groups = try grouping.storedGroups(fields, groupName)
                    let sameGroups = groups.map { Set($0) == Set(grouping.groups(model)) } ?? false
                    guard sameGroups, let valueName = valueName.flatMap({ $0 }) else { return sameGroups }
                    return try probe.readsSameValue(from: fields, name: valueName, as: model)
                }
            }
            try add(model)
        } model: { model in
            try add(model)
        }
    }

    /// Reads a record through a ``FieldReader`` of `reader`, turning a damaged record into
    /// ``KVStoreError/corruptRecord``.
    private func readRecord<T>(
        _ bytes: BorrowedBytes, id: UUID, reader: RecordReader, _ body: (borrowing FieldReader) throws -> T
    ) throws
        -> T
    {
        do {
            return try reader.decoder.decodeFields(from: bytes, fields: reader.fields, body)
        } catch let error as KVStoreError {
            throw error
        } catch {
            throw KVStoreError.undecodable(error, entity: name, id: id, table: Catalog.recordTableName(name))
        }
    }

    /// Calls `record` with the ID and stored bytes of each model `predicate` matches when `read` needs no predicate
    /// evaluated (``AggregateRead/records(_:)``), and `model` with each decoded model that matches otherwise; models
    /// in `excluded` are passed over.
    private func forEachMatch(
        of predicate: Predicate<M>?, read: AggregateRead, excluding excluded: Set<UUID>,
        in txn: borrowing Transaction, record: (UUID, BorrowedBytes) throws -> Void, model: (M) throws -> Void
    ) throws {
        func visit(_ id: UUID) throws -> Bool {
            guard !excluded.contains(id),
                let bytes = try withKey(id, { key in try txn.bytes(forKey: key, in: records) })
            else { return true }
            try record(id, bytes)
            return true
        }
        switch read {
        case .index:
            // An index read is made by `aggregateIndex`, never walked here.
            throw KVStoreError(
                .invalidModel, entity: name, message: "An aggregate read of an index has no matches to walk")
        case .models(let plan):
            try forEachCandidate(plan, in: txn, reader: reader) { candidate in
                if !excluded.contains(candidate.id), try predicate?.evaluate(candidate) ?? true { try model(candidate) }
                return true
            }
        case .records(.scan):
            try txn.scanEntries(records) { key, value in
                let id = UUID(bytes: key)
                if !excluded.contains(id) { try record(id, value) }
                return true
            }
        case .records(.keys(QueryPlan.recordKey, let keys)):
            for key in keys { _ = try visit(key.withBorrowedBytes { UUID(bytes: $0) }) }
        case .records(.keys(let name, let keys)):
            let index = try storedIndex(name)
            var seen = Set<UUID>()
            for key in keys {
                try IndexCandidates.forEachID(
                    underKey: IndexKey.finalized(key, hash: longKeyHash), in: index.table,
                    isUnique: index.description.isUnique, txn: txn
                ) { id in
                    guard keys.count == 1 || seen.insert(id).inserted else { return true }
                    return try visit(id)
                }
            }
        case .records(.range(let name, let lower, let upper, _)):
            try forEachID(inRange: name, lower: lower, upper: upper, in: txn, visit)
        case .records(let plan):
            // A union (exact or not) may reach a model twice, and an ordered read is never exact: evaluate, as for
            // `.models`.
            try forEachMatch(
                of: predicate, read: .models(plan), excluding: excluded, in: txn, record: record, model: model)
        }
    }

    /// Adds to `state` the values an index holds, read from its keys: each key read once, in place, and added with
    /// its count of entries (less those of `excluded` models); a minimum reads up to the first key of a value, a
    /// maximum from the last key down. The keys are those of `plan` (its range or keys on the index), or all.
    private func aggregateIndex<R>(
        _ name: String, operation: Aggregate<M, R>.Operation, plan: QueryPlan?,
        into state: AggregateState<M, R>, excluding excluded: Set<UUID>, in txn: borrowing Transaction
    ) throws {
        let index = try storedIndex(name)
        let reverse = operation == .maximum
        var lower: QueryPlan.Bound?
        var upper: QueryPlan.Bound?
        var keys: [[UInt8]]?
        switch plan {
        case .range(_, let from, let to, _):
            lower = from
            upper = to
        case .keys(_, let planKeys):
            keys = planKeys
        default:
            break
        }
        let stopsAtFirstValue = operation == .minimum || operation == .maximum
        // The values go in through the state's adding functions, which keep its running value out of its stored
        // property for the walk (see ``AggregateState/addingIndexValues(_:)``).
        try state.addingIndexValues { addKey, addModel in
            try walkIndex(
                index, name: name, reverse: reverse, keys: keys, lower: lower, upper: upper,
                stopsAtFirstValue: stopsAtFirstValue, excluding: excluded, addKey: addKey, addModel: addModel, in: txn)
        }
    }

    /// The walk of ``aggregateIndex(_:operation:plan:into:excluding:in:)`` over the keys of `index`: `keys`, or
    /// those between `lower` and `upper`, or all, from the last down when `reverse`; each key's value goes to
    /// `addKey` with its count of entries (less those of `excluded` models), and the models of a cut key to
    /// `addModel`.
    private func walkIndex(
        _ index: StoredIndex, name: String, reverse: Bool, keys: [[UInt8]]?, lower: QueryPlan.Bound?,
        upper: QueryPlan.Bound?, stopsAtFirstValue: Bool, excluding excluded: Set<UUID>,
        addKey: (BorrowedBytes, Int) throws -> Bool, addModel: (M) throws -> Void, in txn: borrowing Transaction
    ) throws {
        let lowerKey = lower.map { IndexKey.finalized($0.key, hash: longKeyHash) }
        let upperKey = upper.map { IndexKey.finalized($0.key, hash: longKeyHash) }
        /// Where a key lies: below the range (-1), in it (0) or above it (1).
        func place(_ key: BorrowedBytes) -> Int {
            if let lowerKey, let lower {
                let order = compareBytes(key, lowerKey)
                if order < 0 || (order == 0 && !lower.isInclusive) { return -1 }
            }
            if let upperKey, let upper {
                let order = compareBytes(key, upperKey)
                if order > 0 || (order == 0 && !upper.isInclusive) { return 1 }
            }
            return 0
        }
        func addEntries(at cursor: borrowing Cursor) throws -> Bool {
            try self.addEntries(
                at: cursor, index: name, excluding: excluded, stopsAtFirstValue: stopsAtFirstValue, addKey: addKey,
                addModel: addModel, in: txn)
        }
        try txn.withCursor(on: index.table) { cursor in
            if let keys {
                for key in reverse ? keys.reversed() : keys
                where try cursor.seek(to: IndexKey.finalized(key, hash: longKeyHash)) {
                    guard try addEntries(at: cursor) else { return }
                }
                return
            }
            var positioned: Bool
            if reverse {
                positioned = try upperKey.map { try cursor.seek(atOrAfter: $0) } ?? false
                if !positioned { positioned = try cursor.last() }
            } else {
                positioned = try lowerKey.map { try cursor.seek(atOrAfter: $0) } ?? cursor.first()
            }
            guard positioned else { return }
            // Each key is read once, by the move that reaches it, for its place, its kind and its value: a sum over
            // an index of distinct values makes two calls into LMDB per key (the move, the count), as a raw cursor,
            // in one loop of the binding's.
            try cursor.forEachKeyEntry(reverse: reverse) { key, count in
                let position = place(key)
                if position == (reverse ? -1 : 1) { return false }
                guard position == 0 else { return true }
                // Through the cursor, which stays on this key: a cut key's models, or the entries of excluded ones.
                guard excluded.isEmpty, !IndexKey.isGrouped(key) else { return try addEntries(at: cursor) }
                return try self.addEntries(
                    ofKey: key, count: count, index: name, stopsAtFirstValue: stopsAtFirstValue, addKey: addKey)
            }
        }
    }

    /// Adds the entries of the key `cursor` is on with `addKey` (the models of a cut key with `addModel`), but those
    /// of `excluded` models; returns whether to go on (not when `stopsAtFirstValue` and the key holds a value). The
    /// cursor is left on one of the key's entries.
    ///
    /// Called for every key of the index: its parameters are plain values, since a generic struct of them would
    /// cost a run-time metadata lookup at each call.
    private func addEntries(
        at cursor: borrowing Cursor, index indexName: String, excluding excluded: Set<UUID>, stopsAtFirstValue: Bool,
        addKey: (BorrowedBytes, Int) throws -> Bool, addModel: (M) throws -> Void, in txn: borrowing Transaction
    ) throws -> Bool {
        guard let isCut = try cursor.withCurrentEntry({ key, _ in IndexKey.isGrouped(key) }) else { return false }
        guard !isCut else {
            try addModels(ofCutKeyAt: cursor, excluding: excluded, addModel: addModel, in: txn)
            return true
        }
        var count = try cursor.duplicateCount()
        if !excluded.isEmpty {
            count = 0
            var found = try cursor.firstDuplicate()
            while found {
                if try cursor.withCurrentEntry({ _, value in !excluded.contains(UUID(bytes: value)) }) == true {
                    count += 1
                }
                found = try cursor.nextDuplicate()
            }
        }
        guard count > 0 else { return true }
        let goesOn = try cursor.withCurrentEntry { key, _ in
            try addEntries(
                ofKey: key, count: count, index: indexName, stopsAtFirstValue: stopsAtFirstValue, addKey: addKey)
        }
        return goesOn ?? false
    }

    /// Adds `count` entries of `key`, a key of the index `indexName` that LMDB's limit did not cut, with `addKey`;
    /// returns whether to go on (not when `stopsAtFirstValue` and the key holds a value).
    ///
    /// - Throws: ``KVStoreError/damaged`` when the key holds no value of the attribute's type,
    ///   ``KVStoreError/overflow`` from an integer sum.
    private func addEntries(
        ofKey key: BorrowedBytes, count: Int, index indexName: String, stopsAtFirstValue: Bool,
        addKey: (BorrowedBytes, Int) throws -> Bool
    ) throws -> Bool {
        guard count > 0 else { return true }
        guard try addKey(key, count) else {
            throw KVStoreError(
                .damaged, entity: name, field: indexName,
                message: "A key of the index \(indexName) of \(name) holds no value of the attribute's type: run "
                    + "'kvtool check' on the store")
        }
        // A minimum or maximum passes over nil, which sorts first: it stops at the first other value.
        return !(stopsAtFirstValue && !(key.count == 1 && key[0] == IndexKey.absent))
    }

    /// Adds the models of the key `cursor` is on, which LMDB's limit cut: its values differ after the cut, so each
    /// model is read. (Only strings are that long, and a minimum or maximum never reads their index.)
    ///
    /// Never inlined into ``addEntries(at:index:excluding:stopsAtFirstValue:addKey:addModel:in:)``, whose every call
    /// would otherwise look up the metadata of `M?` that reading a model needs.
    @inline(never)
    private func addModels(
        ofCutKeyAt cursor: borrowing Cursor, excluding excluded: Set<UUID>, addModel: (M) throws -> Void,
        in txn: borrowing Transaction
    ) throws {
        var found = try cursor.firstDuplicate()
        while found {
            if let id = try cursor.withCurrentEntry({ _, value in UUID(bytes: value) }),
                excluded.isEmpty || !excluded.contains(id),
                let model = try model(for: id, in: txn, reader: reader)
            {
                try addModel(model)
            }
            found = try cursor.nextDuplicate()
        }
    }
}

/// Which attributes an aggregate reads back from the keys of an index on them alone.
enum IndexKeyValues {
    /// Whether the keys of an attribute of `type` read back into its values (``IndexKeyReadable``): integers,
    /// `Bool`, `String`, `UUID`, `Date`, and optionals of them.
    static func isReadable(_ type: Any.Type) -> Bool {
        type is any IndexKeyReadable.Type
    }

    /// Whether keys of `type` sort as its values' `<`: integers and dates, and optionals of them (`nil` first).
    static func isOrdered(_ type: Any.Type) -> Bool {
        if let optional = type as? any AnyOptional.Type { return isOrdered(optional.wrappedType) }
        return type is any FixedWidthInteger.Type || type == Date.self
    }
}
