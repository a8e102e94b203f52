import Foundation

/// ``PersistentModel`` classes in a context: one object per model, changes found at save by comparing encodings,
/// relationship properties read through the context.
extension ModelContext {
    // MARK: - Inserting and deleting

    /// Registers `object` to be inserted at the next ``save()``, with the objects new to the context that its
    /// relationship properties hold (SwiftData's insert of a graph).
    ///
    /// Inserting an object the context already tracks does nothing; inserting one that is deleted here brings it back.
    public func insert<M: PersistentModel>(_ object: M) {
        let table = tracked.table(for: M.self)
        let id = object.id
        // One hash of the ID for a new object: it goes in, and what it replaced is looked at afterwards.
        if let previous = table.byID.updateValue(.init(object: object, state: .inserted), forKey: ModelKey(id)),
            previous.object === object
        {
            // Held already: only a deleted object changes, back to what it was.
            guard case .deleted(let snapshot) = previous.state else {
                table.byID[ModelKey(id)] = previous
                return
            }
            table.byID[ModelKey(id)]?.state = snapshot.map { .stored($0) } ?? .inserted
            if snapshot == nil { pending.record(.insert(object), of: M.self, id: id) }
            relationshipGeneration += 1
            return
        }
        // Recorded now, as a struct's insert is: a save writes inserts in the order they came, and a program makes
        // its objects (and their time-ordered IDs) in that order, which the save's sort by key then finds sorted.
        pending.record(.insert(object), of: M.self, id: id)
        relationshipGeneration += 1
        guard let store = try? container.store(for: M.self) else {
            // A model the container does not know, whose save will say so; its graph comes in all the same.
            for relationship in M.entity.relationships {
                guard let state = relationship.property?.relatedObjects(object) else { continue }
                state.link = loaderLink
                for related in state.objects ?? [] { insertIfNew(related) }
            }
            return
        }
        attach(object, store: store)
        for (offset, target) in store.relationshipTargets {
            guard let related = ObjectContents.existingRelatedObjects(in: object, at: offset)?.objects,
                !related.isEmpty
            else { continue }
            insertIfNew(related, as: target)
        }
    }

    /// Inserts the objects of any sequence, even a lazy one of millions, and saves the context after every
    /// `chunkSize` of them at most: the context lets go of a saved chunk's objects that nothing else references, so an
    /// importer's memory holds about one chunk (a context that inserts without saving holds everything it inserted).
    ///
    /// ```swift
    /// try context.insert(contentsOf: rows.lazy.map { Task(title: $0) }, chunkSize: 1_000)
    /// ```
    ///
    /// A save is one write transaction, which LMDB holds a copy of every changed page for until it commits: in a store
    /// of millions of models each object changes a page per table. So each chunk after the first is sized from the
    /// pages the last save changed, to stay within the configuration's ``ModelConfiguration/chunkMemoryBudget``
    /// (between ``ModelContext/chunkBudgetInterval`` objects and `chunkSize`).
    ///
    /// Each save writes every change of the context, so changes made before the call go with its first chunk. When a
    /// save fails, the chunks before it stay committed, the failing chunk stays pending in the context (save again,
    /// or ``rollback()``), and the error's ``KVStoreError/committedCount`` says how many objects were committed.
    ///
    /// - Parameters:
    ///   - objects: The objects to insert, with the new objects their relationship properties hold.
    ///   - chunkSize: How many of `objects` each save holds at most.
    ///   - progress: Called after each chunk commits, with the number of objects of `objects` committed so far.
    /// - Returns: The number of objects of `objects` saved.
    /// - Throws: ``KVStoreError/invalidModel`` for a chunk size below 1, or the error of the failing save (what
    ///   ``save()`` throws), with ``KVStoreError/committedCount`` set.
    @discardableResult
    public func insert<S: Sequence>(
        contentsOf objects: S,
        chunkSize: Int = 10_000,
        progress: ((Int) -> Void)? = nil
    ) throws -> Int where S.Element: PersistentModel {
        guard chunkSize >= 1 else {
            throw KVStoreError(
                .invalidModel, entity: S.Element.entity.name,
                message: "The chunk size must be at least 1, not \(chunkSize)")
        }
        let budget = container.configuration.chunkMemoryBudget
        var size = chunkSize
        var committed = 0
        var inChunk = 0
        // The saves below measure the pages they change (see `writePending`); saves after the call do not.
        defer { lastSaveChangedBytes = nil }
        func flush() throws {
            guard inChunk > 0 else { return }
            lastSaveChangedBytes = 0
            do {
                try save()
            } catch var error as KVStoreError {
                error.committedCount = committed
                throw error
            } catch {
                var wrapped = KVStoreError(.storage, message: "A chunked insert's save failed", cause: error)
                wrapped.committedCount = committed
                throw wrapped
            }
            committed += inChunk
            // The next chunk holds as many objects as fit the budget at this chunk's pages per object, at most
            // twice this one (the first estimates are high while the tables are small) and within the bounds.
            if let bytes = lastSaveChangedBytes, bytes > 0 {
                let fitting = Int(min(Double(inChunk) * Double(budget) / Double(bytes), Double(chunkSize)))
                size = min(chunkSize, max(Self.chunkBudgetInterval, min(2 * inChunk, fitting)))
            }
            inChunk = 0
            progress?(committed)
        }
        for object in objects {
            insert(object)
            inChunk += 1
            if inChunk >= size { try flush() }
        }
        try flush()
        return committed
    }

    /// Registers `object` to be deleted at the next ``save()``, and applies the delete rules of its relationships to
    /// the objects this context holds: a cascade deletes them too, a nullify removes their references to it. The
    /// store applies the rules to the models the context does not hold when it saves.
    ///
    /// Deleting an object inserted and not saved yet takes it out of the context.
    public func delete<M: PersistentModel>(_ model: M) {
        // Another object of the same model (read outside the context) deletes the context's.
        let object = tracked.held(M.self, id: model.id) ?? model
        switch tracked.state(of: M.self, id: object.id) {
        case .deleted: return
        case .inserted:
            tracked.remove(M.self, id: object.id)
            pending.forget(M.self, id: object.id)
        case .stored(let snapshot): tracked.set(object, .deleted(snapshot))
        case nil:
            // An object the context never saw, read elsewhere: deleted by its ID.
            tracked.set(object, .deleted(nil))
        }
        relationshipGeneration += 1
        for relationship in M.entity.relationships {
            guard let property = relationship.property else { continue }
            applyDeleteRule(relationship, property: property, of: object)
        }
    }

    /// Applies `relationship`'s delete rule to the objects of this context that `object`, being deleted, relates to.
    private func applyDeleteRule<M: PersistentModel>(
        _ relationship: Relationship<M>, property: RelationshipProperty<M>, of object: M
    ) {
        guard relationship.deleteRule == .cascade || relationship.deleteRule == .nullify,
            let target = relationship.target as? any PersistentModel.Type
        else { return }
        func apply<T: PersistentModel>(_: T.Type) {
            let related: [T]
            switch property.kind {
            case .toOne, .manyToMany:
                // The stored side: only a cascade reaches the related objects; they keep no reference to it.
                guard relationship.deleteRule == .cascade else { return }
                let ids = Set(property.relatedObjects(object).ids)
                related = tracked.objects(of: T.self).map(\.object).filter { ids.contains($0.id) }
            case .toMany:
                guard let field = relationship.inverseField,
                    let inverse = T.entity.relationships.first(where: { $0.field == field })?.property
                else { return }
                related = tracked.objects(of: T.self).filter { entry in
                    if case .deleted = entry.state { return false }
                    return inverse.relatedObjects(entry.object).ids.contains(object.id)
                }
                .map(\.object)
                if relationship.deleteRule == .nullify {
                    for referrer in related {
                        let state = inverse.relatedObjects(referrer)
                        state.ids.removeAll { $0 == object.id }
                        state.objects = nil
                    }
                    return
                }
            }
            for child in related { delete(child) }
        }
        apply(target)
    }

    // MARK: - Reading

    /// The objects that match `descriptor`, sorted and paged as it says: the context's own object for each model, with
    /// its unsaved changes (an object changed to match comes, one changed not to does not, a deleted one does not).
    ///
    /// The predicate is planned over the indexes as for structs. One made of comparisons of attributes alone is
    /// tested on the records as for structs (see <doc:FetchingAndThePlanner>); any other is evaluated on the objects
    /// once they are in the context, where their relationship properties read. Of the objects of `M` the context
    /// already holds, those changed here (or inserted) answer with their values as they are now; the others answer
    /// as the store does. A fetch checks each held object of `M` for changes (see ``hasChanges``).
    ///
    /// - Throws: ``KVStoreError/closed`` after the container closed, ``KVStoreError/schemaChanged`` when the store's
    ///   schema moved past the container's models, ``KVStoreError/corruptRecord`` when a stored record does not decode,
    ///   ``KVStoreError/unknownEntity`` when `M` is not part of the container, ``KVStoreError/invalidModel`` for a
    ///   relationship to prefetch that `M` does not declare, ``KVStoreError/encodingFailed`` when an object does not
    ///   encode, what the predicate throws as it evaluates an object, or ``KVStoreError/damaged`` or
    ///   ``KVStoreError/storage`` when the store cannot be read.
    public func fetch<M: PersistentModel>(_ descriptor: FetchDescriptor<M>) throws -> [M] {
        let store = try container.store(for: M.self)
        let (read, records, isExact) = try container.read { txn in
            try txn.run {
                try store.candidates(
                    descriptor, keepingRecords: store.objectLayout == nil, in: txn.transaction.pointee)
            }
        }
        // Each candidate is taken out of this array as it is used (see `candidates(_:keepingRecords:in:)`).
        var candidates = read
        // The held objects that changed here answer with their values as they are now; the others as the store does.
        var changed = try changedObjects(of: M.self, store: store)
        var results: [M] = []
        results.reserveCapacity(candidates.count)
        // The table of `M`, taken once: the candidates go into it directly.
        let table = tracked.table(for: M.self)
        table.byID.reserveCapacity(table.byID.count + candidates.count)
        // A candidate may be held already when the context held objects of `M`, or when evaluating the predicate
        // loads related objects (of `M` too) into the map.
        let mayBeHeld = !table.byID.isEmpty || !isExact
        if !mayBeHeld {
            // Every candidate is new here and matches. The table's entries move out for the loop and back after it,
            // so that adding one costs no run-time exclusivity check on the table (which costs more than the insert).
            // Not through the table's `withEntries`: in its closure, each append to `results` would look up the type
            // metadata of `[M]`, which this function has at hand. Nothing in the loop reaches the table.
            var entries: [ModelKey: TrackedObjects.Entry] = [:]
            swap(&entries, &table.byID)
            defer { swap(&entries, &table.byID) }
            let (link, offsets) = (loaderLink, store.relationshipOffsets)
            for position in candidates.indices {
                // Taken out of the array: the object moves, where a copy would cost a retain, and the array's end a
                // release, per object.
                guard let taken = candidates[position].take() else { continue }
                let candidate = knownTypeDowncast(taken, to: M.self)
                ObjectContents.attach(link, to: candidate, at: offsets)
                let record = position < records.count ? records[position] : nil
                let snapshot = try snapshot(ofDecoded: candidate, store: store, record: record)
                entries[ModelKey(candidate.id)] = TrackedObjects.Entry(
                    object: candidate, state: .stored(consume snapshot))
                results.append(consume candidate)
            }
        } else {
            for position in candidates.indices {
                guard let taken = candidates[position].take() else { continue }
                let candidate = knownTypeDowncast(taken, to: M.self)
                if let entry = table.byID[ModelKey(candidate.id)] {
                    let object = knownTypeDowncast(entry.object, to: M.self)
                    if let object = changed.removeValue(forKey: object.id) {
                        if try descriptor.matches(object) { results.append(object) }
                        continue
                    }
                    guard case .stored = entry.state else { continue }
                    attach(candidate, store: store)
                    if try isExact || descriptor.matches(candidate) { results.append(object) }
                    continue
                }
                attach(candidate, store: store)
                if try isExact || descriptor.matches(candidate) {
                    let record = position < records.count ? records[position] : nil
                    let snapshot = try snapshot(ofDecoded: candidate, store: store, record: record)
                    table.setStored(candidate, id: candidate.id, snapshot: snapshot)
                    results.append(candidate)
                }
            }
        }
        // The changed objects the store did not offer may match now: inserted here, or changed to match.
        for object in changed.values where try descriptor.matches(object) { results.append(object) }
        results = descriptor.sortedPage(of: results)
        if !descriptor.relationshipsToPrefetch.isEmpty {
            try prefetch(descriptor.relationshipsToPrefetch, of: results)
        }
        return results
    }

    /// The objects of `M` the context holds whose values may differ from the store's because of this context:
    /// inserted, or stored and changed since their snapshot (deleted ones are not among them). One comparison per
    /// object held, without encoding for a class with an ``ObjectLayout``.
    private func changedObjects<M: PersistentModel>(of type: M.Type, store: EntityStore<M>) throws -> [UUID: M] {
        try unsavedObjects(of: M.self, store: store).changed
    }

    /// The objects of `M` the context holds that differ from the store's because of this context: those inserted
    /// or changed since their snapshot, and the IDs of those deleted, not saved yet.
    ///
    /// The same pass lets go of the unchanged objects of `M` that nothing outside the context references (see
    /// ``TrackedObjects/Table/forEachPossiblyChanged(relationshipsAt:includingDeleted:includingInserted:releasingUnreferenced:_:)``),
    /// so that the check each read makes covers the objects the program holds, not all it ever read.
    func unsavedObjects<M: PersistentModel>(
        of type: M.Type, store: EntityStore<M>, includingDeleted: Bool = false
    ) throws -> (changed: [UUID: M], deleted: Set<UUID>) {
        var changed: [UUID: M] = [:]
        var deleted = Set<UUID>()
        let offsets = store.storedRelationshipOffsets
        try tracked.table(M.self)?.forEachPossiblyChanged(
            relationshipsAt: offsets, includingDeleted: includingDeleted, releasingUnreferenced: true
        ) { entry in
            let object = knownTypeDowncast(entry.object, to: M.self)
            switch entry.state {
            case .inserted: changed[object.id] = object
            case .deleted: deleted.insert(object.id)
            case .stored(let snapshot):
                if try !matches(object, snapshot, store: store, mayMatchWhole: false) { changed[object.id] = object }
            }
        }
        return (changed, deleted)
    }

    /// The number of objects that match `descriptor`'s predicate, with the context's unsaved changes.
    ///
    /// - Throws: What ``fetch(_:)-3tbhk`` throws.
    public func fetchCount<M: PersistentModel>(_ descriptor: FetchDescriptor<M>) throws -> Int {
        var unpaged = descriptor.unpaged
        unpaged.sortBy = []
        unpaged.relationshipsToPrefetch = []
        return try fetch(unpaged).count
    }

    /// The context's object of type `type` with `id`, with its unsaved changes; `nil` when there is none or it is
    /// deleted here.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when the stored bytes do not decode, ``KVStoreError/closed`` after
    ///   the container closed, ``KVStoreError/unknownEntity`` when `M` is not part of the container, or
    ///   ``KVStoreError/encodingFailed`` when the object read does not encode.
    public func model<M: PersistentModel>(for id: UUID, as type: M.Type = M.self) throws -> M? {
        try heldOrRead(M.self, ids: [id]).first ?? nil
    }

    /// The context's objects of `type` with `ids`, in the same order, `nil` for IDs without one: those it holds, and
    /// the others read in one transaction.
    func heldOrRead<M: PersistentModel>(_ type: M.Type, ids: [UUID]) throws -> [M?] {
        var results = [M?](repeating: nil, count: ids.count)
        var missing: [(position: Int, id: UUID)] = []
        for (position, id) in ids.enumerated() {
            switch tracked.state(of: M.self, id: id) {
            case .deleted: continue
            case .some:
                results[position] = tracked.held(M.self, id: id)
            case nil: missing.append((position, id))
            }
        }
        guard !missing.isEmpty else { return results }
        let store = try container.store(for: M.self)
        let read = try container.read { txn in try txn.models(for: missing.map(\.id), as: M.self) }
        for (slot, model) in zip(missing, read) {
            guard let model else { continue }
            attach(model, store: store)
            results[slot.position] = try register(model, store: store)
        }
        return results
    }

    // MARK: - Saving and rolling back

    /// Records the unsaved changes of every object the context holds as pending changes, which ``save()`` writes.
    func recordTrackedChanges() throws {
        for operations in tracked.operations {
            try operations.recordChanges(self)
        }
    }

    /// Records the unsaved changes of the objects of `M`: inserts, deletes, and objects that no longer match their
    /// snapshots, whose values become their snapshots once a save writes them.
    func recordChanges<M: PersistentModel>(of type: M.Type) throws {
        let store = try container.store(for: M.self)
        guard let table = tracked.table(M.self) else { return }
        // An unchanged stored object forgets a change recorded before (it was changed back), when there is one; when
        // there is none, the objects whose bytes match their shadows are passed over in place.
        let mayForget = table.hasRecordedStoredChanges
        func record(_ object: M, _ state: TrackedObjects.State) throws {
            switch state {
            case .inserted:
                // Recorded once (the change holds the object, so its values are those of now).
                guard !pending.contains(M.self, id: object.id) else { return }
                pending.record(.insert(object), of: M.self, id: object.id)
            case .deleted:
                pending.record(.delete(M.self), of: M.self, id: object.id)
                // Inserted again, the object is stored once more, and this change must go.
                table.hasRecordedStoredChanges = true
            case .stored(.fields(let shadow)):
                // Without `mayForget`, the object comes from the pass over the possibly changed ones, whose shadows
                // did not match as a whole. A save that writes it retakes its shadow in place (`didSave`).
                if try matches(object, .fields(shadow), store: store, mayMatchWhole: mayForget) {
                    guard mayForget else { return }
                    pending.forget(M.self, id: object.id)
                } else {
                    pending.record(.insert(object), of: M.self, id: object.id)
                    table.hasRecordedStoredChanges = true
                }
            case .stored(.record(let snapshot)):
                let encoding = try store.comparisonEncoding(of: object, encoder: &comparisonEncoder)
                if encoding != snapshot {
                    pending.record(.insert(object), of: M.self, id: object.id)
                    changedEncodings[ObjectIdentifier(object)] = encoding
                    table.hasRecordedStoredChanges = true
                } else if mayForget {
                    pending.forget(M.self, id: object.id)
                    changedEncodings[ObjectIdentifier(object)] = nil
                }
            }
        }
        guard !mayForget else {
            try tracked.forEachObject(of: M.self, record)
            // Every inserted object has its pending insert now.
            table.insertsMayBeUnrecorded = false
            return
        }
        // The inserted objects were recorded as they were inserted, unless a save's effects did not complete.
        try table.forEachPossiblyChanged(
            relationshipsAt: store.storedRelationshipOffsets, includingDeleted: true,
            includingInserted: table.insertsMayBeUnrecorded, releasingUnreferenced: true
        ) { entry in
            try record(knownTypeDowncast(entry.object, to: M.self), entry.state)
        }
        table.insertsMayBeUnrecorded = false
    }

    /// Takes a save's effects on the objects of `M` with the IDs it wrote (`written`): the saved ones are stored as they
    /// are now, the deleted ones leave, and so do inserted ones that a unique constraint merged into another stored
    /// model (`merged`, by ID): the store holds their values under that model's ID, which ``SaveResult/storedID(of:)``
    /// gives.
    func didSave<M: PersistentModel>(_ type: M.Type, merged: [UUID: UUID], written: [UUID]) throws {
        let store = try container.store(for: M.self)
        try takeStoredExternalValues(of: M.self, store: store, merged: merged)
        // Only the objects the save wrote change; the unchanged ones keep their snapshots. Each entry is found once
        // and changed in place.
        let table = tracked.table(for: M.self)
        // The save wrote every recorded change.
        table.hasRecordedStoredChanges = false
        // One access to the table's entries for the whole pass: an access per entry read cost a quarter of the
        // pass in run-time exclusivity checks. Nothing below reaches the table but through `entries`.
        let isOnlyReference = table.isUniquelyReferenced
        try table.withEntries { entries in
            for id in written {
                guard let index = entries.index(forKey: ModelKey(id)) else { continue }
                switch entries.values[index].state {
                case .deleted: entries.remove(at: index)
                case .inserted where !merged.isEmpty && merged[id] != nil: entries.remove(at: index)
                case .inserted where isOnlyReference(&entries.values[index].object):
                    // Saved, and referenced by nothing else (an importer's object): it leaves now, as it would after
                    // the save, without a snapshot to take.
                    entries.remove(at: index)
                case .inserted:
                    let object = knownTypeDowncast(entries.values[index].object, to: M.self)
                    entries.values[index].state = .stored(try snapshot(of: object, store: store))
                case .stored where isOnlyReference(&entries.values[index].object):
                    // Saved, and referenced by nothing else: it leaves now.
                    entries.remove(at: index)
                case .stored(.fields(let shadow)):
                    // Written as it is now: its shadow takes its values in place of a new one.
                    let object = knownTypeDowncast(entries.values[index].object, to: M.self)
                    ObjectContents.markRelatedIDsSaved(in: object, at: store.storedRelationshipOffsets)
                    shadow.retake(from: object)
                case .stored(.record):
                    let object = knownTypeDowncast(entries.values[index].object, to: M.self)
                    guard let encoding = changedEncodings[ObjectIdentifier(object)] else { continue }
                    let record = store.hasExternalAttributes ? nil : encoding
                    entries.values[index].state = .stored(try snapshot(of: object, store: store, record: record))
                }
            }
        }
        // Every inserted object the save wrote is stored now, or gone.
        table.insertsMayBeUnrecorded = false
    }

    /// Brings the objects of `M` the context holds in line with the store after a save that deleted models: the delete
    /// rules the store applied to models the context held without knowing (fetched after the delete) deleted some
    /// (a cascade), which leave the context, and changed the references of others (a nullify), which take the stored
    /// ones. One read of the held objects of `M` that have stored relationships.
    func reconcileAfterDeletes<M: PersistentModel>(_ type: M.Type) throws {
        let stored = M.entity.relationships.filter { $0.property?.kind == .toOne || $0.property?.kind == .manyToMany }
        guard !stored.isEmpty else { return }
        let held = tracked.objects(of: M.self).map(\.object)
        guard !held.isEmpty else { return }
        let store = try container.store(for: M.self)
        let records = try container.read { txn in try txn.models(for: held.map(\.id), as: M.self) }
        for (object, record) in zip(held, records) {
            guard let record else {
                tracked.remove(M.self, id: object.id)
                continue
            }
            var changed = false
            for relationship in stored {
                guard let property = relationship.property else { continue }
                let (mine, theirs) = (property.relatedObjects(object), property.relatedObjects(record))
                if mine.ids != theirs.ids {
                    mine.ids = theirs.ids
                    mine.objects = nil
                    changed = true
                }
            }
            if changed { tracked.set(object, .stored(try snapshot(of: object, store: store))) }
        }
    }

    /// Gives the objects of `M` that held external values not saved yet the descriptors the save stored, read back
    /// in one transaction, so that they hold what the store holds and a later save does not write the bytes again.
    private func takeStoredExternalValues<M: PersistentModel>(
        of type: M.Type, store: EntityStore<M>, merged: [UUID: UUID]
    ) throws {
        guard store.hasExternalAttributes else { return }
        let unsaved = tracked.objects(of: M.self).compactMap { object, state -> M? in
            if case .deleted = state { return nil }
            guard merged[object.id] == nil else { return nil }
            let holdsUnsaved = store.externalAttributes.contains { attribute in
                attribute.value(in: object).map { !$0.isStored } ?? false
            }
            return holdsUnsaved ? object : nil
        }
        guard !unsaved.isEmpty else { return }
        let stored = try container.read { txn in try txn.models(for: unsaved.map(\.id), as: M.self) }
        for case (var object, let saved?) in zip(unsaved, stored) {
            for attribute in store.externalAttributes { attribute.set(attribute.value(in: saved), in: &object) }
        }
    }

    /// Gives the objects of `M` back the values they were fetched with: inserted ones leave, deleted ones return,
    /// changed ones take their stored values again.
    func rollBack<M: PersistentModel>(_ type: M.Type) {
        // The rollback forgot every recorded change.
        tracked.table(M.self)?.hasRecordedStoredChanges = false
        guard let store = try? container.store(for: M.self) else { return }
        for (object, state) in tracked.objects(of: M.self) {
            switch state {
            case .inserted: tracked.remove(M.self, id: object.id)
            case .deleted(let snapshot):
                if let snapshot {
                    restore(object, from: snapshot, store: store)
                    tracked.set(object, .stored(snapshot))
                } else {
                    tracked.remove(M.self, id: object.id)
                }
            case .stored(let snapshot):
                guard (try? matches(object, snapshot, store: store)) != true else { continue }
                restore(object, from: snapshot, store: store)
            }
        }
    }

    /// Gives `object` the values of `snapshot`, keeping its identity; an object whose class the runtime cannot lay
    /// out leaves the context instead, so that the next read gives its stored values.
    private func restore<M: PersistentModel>(
        _ object: M, from snapshot: TrackedObjects.Snapshot, store: EntityStore<M>
    ) {
        let record: [UInt8]
        switch snapshot {
        case .fields(let shadow):
            shadow.restore(into: object)
            for offset in store.relationshipOffsets {
                // A property without a state holds its record's ID still.
                ObjectContents.existingRelatedObjects(in: object, at: offset)?.restoreSaved()
            }
            return
        case .record(let bytes): record = bytes
        }
        let reader = store.reader
        guard
            let stored = try? record.withBorrowedBytes({
                try store.decodeRecord($0, fields: reader.fields, decoder: reader.decoder)
            }),
            ObjectContents.exchange(object, stored)
        else {
            tracked.remove(M.self, id: object.id)
            return
        }
        attach(object, store: store)
    }

    /// Whether an object the context holds has unsaved changes: one comparison per object held.
    func trackedObjectsHaveChanges() -> Bool {
        if tracked.hasInsertsOrDeletes { return true }
        return tracked.operations.contains { $0.hasChanges(self) }
    }

    /// Whether an object of `M` the context holds no longer matches its snapshot.
    func hasChanges<M: PersistentModel>(_ type: M.Type) -> Bool {
        guard let store = try? container.store(for: M.self), let table = tracked.table(M.self) else { return false }
        var found = false
        table.forEachPossiblyChanged(relationshipsAt: store.storedRelationshipOffsets) { entry in
            guard !found else { return }
            guard case .stored(let snapshot) = entry.state else {
                found = true
                return
            }
            found = (try? matches(knownTypeDowncast(entry.object, to: M.self), snapshot, store: store)) != true
        }
        return found
    }

    // MARK: - Snapshots

    /// The snapshot of `object`, which holds the values of its stored record (`record`, when the caller has its
    /// bytes): a copy of its attributes when its class has an ``ObjectLayout``, its encoding otherwise.
    private func snapshot<M: PersistentModel>(
        of object: M, store: EntityStore<M>, record: [UInt8]? = nil
    ) throws -> TrackedObjects.Snapshot {
        if store.objectLayout != nil {
            ObjectContents.markRelatedIDsSaved(in: object, at: store.storedRelationshipOffsets)
        }
        return try snapshot(ofDecoded: object, store: store, record: record)
    }

    /// The snapshot of `object`, just decoded from its stored record (`record`, when the caller has its bytes), as
    /// ``snapshot(of:store:record:)`` takes it: its relationship properties hold their saved IDs already.
    private func snapshot<M: PersistentModel>(
        ofDecoded object: M, store: EntityStore<M>, record: [UInt8]?
    ) throws -> TrackedObjects.Snapshot {
        guard let layout = store.objectLayout else {
            return .record(try record ?? store.comparisonEncoding(of: object, encoder: &comparisonEncoder))
        }
        return .fields(FieldShadow.of(object, layout: layout))
    }

    /// Whether `object` holds the values of `snapshot`. A caller that found a shadow's bytes differ as a whole
    /// (``FieldShadow/matches(_:)``) passes `mayMatchWhole: false`, so that they are compared attribute by attribute
    /// alone.
    private func matches<M: PersistentModel>(
        _ object: M, _ snapshot: TrackedObjects.Snapshot, store: EntityStore<M>, mayMatchWhole: Bool = true
    ) throws -> Bool {
        switch snapshot {
        case .fields(let shadow):
            guard !storedRelationshipsChanged(object, store: store) else { return false }
            switch shadow.compare(object, mayMatch: mayMatchWhole) {
            case .same: return true
            case .changed: return false
            case .undecided:
                // The encodings decide, as for a record snapshot: the values as they are, and as the shadow holds them.
                let now = try store.comparisonEncoding(of: object, encoder: &comparisonEncoder)
                let then = try shadow.withShadowValues(in: object) {
                    try store.comparisonEncoding(of: object, encoder: &comparisonEncoder)
                }
                return now == then
            }
        case .record(let bytes): return try store.comparisonEncoding(of: object, encoder: &comparisonEncoder) == bytes
        }
    }

    /// Whether a to-one or many-to-many relationship of `object` holds other IDs than its record.
    private func storedRelationshipsChanged<M: PersistentModel>(_ object: M, store: EntityStore<M>) -> Bool {
        ObjectContents.relatedIDsChanged(in: object, at: store.storedRelationshipOffsets)
    }

    // MARK: - Registration

    /// The context's object for `object`'s ID: the one it holds, or `object`, registered as stored with `record`, the
    /// bytes it was decoded from, or its encoding.
    ///
    /// A record this version wrote is the object's encoding, byte for byte. One written otherwise (before a field was
    /// added, in another field order) compares as changed, and the next save writes it once in the current form.
    private func register<M: PersistentModel>(
        _ object: M, store: EntityStore<M>, record: [UInt8]? = nil
    ) throws -> M {
        if let held = tracked.held(M.self, id: object.id) { return held }
        return try registerNew(object, store: store, record: record)
    }

    /// Registers `object`, which the context does not hold, as ``register(_:store:record:)`` does, for a caller that
    /// looked.
    private func registerNew<M: PersistentModel>(
        _ object: M, store: EntityStore<M>, record: [UInt8]?
    ) throws -> M {
        tracked.set(object, .stored(try snapshot(ofDecoded: object, store: store, record: record)))
        return object
    }

    /// Makes the context the loader of `object`'s relationship properties, found where `store` says they are.
    private func attach<M: PersistentModel>(_ object: M, store: EntityStore<M>) {
        ObjectContents.attach(loaderLink, to: object, at: store.relationshipOffsets)
    }

    /// Inserts each of `objects`, models of `target`, that the context does not hold.
    private func insertIfNew(_ objects: [AnyObject], as target: any PersistentModel.Type) {
        func insertNew<T: PersistentModel>(_: T.Type) {
            for object in objects {
                // An object of `T` has exactly that class (a model class inherits from nothing, the container
                // checks): comparing the classes costs less than the dynamic cast, kept for anything else.
                let exact = type(of: object) == T.self
                guard let model = exact ? knownTypeDowncast(object, to: T.self) : object as? T else { continue }
                if tracked.held(T.self, id: model.id) !== model { insert(model) }
            }
        }
        insertNew(target)
    }

    /// Inserts `object` when it is a model the context does not hold.
    private func insertIfNew(_ object: AnyObject) {
        guard let model = object as? any PersistentModel else { return }
        func insertNew<T: PersistentModel>(_ model: T) {
            if tracked.held(T.self, id: model.id) !== model { insert(model) }
        }
        insertNew(model)
    }

    // MARK: - Prefetching

    /// Reads the objects related to `objects` through the named relationships, in one read transaction per
    /// relationship, and gives each object's property its related objects.
    private func prefetch<M: PersistentModel>(_ names: [String], of objects: [M]) throws {
        for name in names {
            guard let relationship = M.entity.relationships.first(where: { $0.name == name }),
                let property = relationship.property, let target = relationship.target as? any PersistentModel.Type
            else {
                throw KVStoreError(
                    .invalidModel, entity: M.entity.name, field: name,
                    message: "\(M.entity.name) has no relationship property named \(name) to prefetch")
            }
            try prefetch(relationship, property: property, of: objects, target: target)
        }
    }

    private func prefetch<M: PersistentModel, T: PersistentModel>(
        _ relationship: Relationship<M>, property: RelationshipProperty<M>, of objects: [M], target: T.Type
    ) throws {
        switch property.kind {
        case .toOne, .manyToMany:
            let ids = Array(Set(objects.flatMap { property.relatedObjects($0).ids }))
            let loaded = Dictionary(
                try heldOrRead(T.self, ids: ids).compactMap { $0 }.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
            for object in objects {
                let state = property.relatedObjects(object)
                let related = state.ids.compactMap { loaded[$0] }
                if related.count == state.ids.count { state.objects = related }
            }
        case .toMany:
            guard let field = relationship.inverseField else { return }
            let lists = try currentReferrers(T.self, field: field, to: objects.map(\.id))
            for object in objects {
                let state = property.relatedObjects(object)
                state.objects = lists[object.id] ?? []
                state.generation = relationshipGeneration
            }
        }
    }

    /// The objects of `T` whose field `field` holds each of `ids`, with the context's changes, in ID order: stored
    /// referrers read in one transaction, less those the context changed or deleted, plus those it holds that refer
    /// to the IDs now.
    private func currentReferrers<T: PersistentModel>(
        _ type: T.Type, field: String, to ids: [UUID]
    ) throws -> [UUID: [T]] {
        let store = try container.store(for: T.self)
        guard let inverse = T.entity.relationships.first(where: { $0.field == field })?.property else { return [:] }
        var byParent = try container.read { txn in
            try txn.run { try store.referrers(to: ids, field: field, in: txn.transaction.pointee) }
        }
        let parents = Set(ids)
        // The objects the context holds answer for themselves, with their references as they are now.
        var held: [UUID: [UUID]] = [:]
        for (object, state) in tracked.objects(of: T.self) {
            if case .deleted = state {
                held[object.id] = []
            } else {
                held[object.id] = inverse.relatedObjects(object).ids.filter { parents.contains($0) }
            }
        }
        for parent in byParent.keys { byParent[parent]?.removeAll { held[$0] != nil } }
        for (child, references) in held {
            for parent in Set(references) { byParent[parent, default: []].append(child) }
        }
        let all = Array(Set(byParent.values.joined()))
        let loaded = Dictionary(
            try heldOrRead(T.self, ids: all).compactMap { $0 }.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        return byParent.mapValues { children in
            children.compactMap { loaded[$0] }.sortedByID()
        }
    }
}

// MARK: - Relationship loading

extension ModelContext: RelationshipLoader {
    func loadObject<T: PersistentModel>(_ type: T.Type, id: UUID) -> T? {
        loadObjects(type, ids: [id]).first
    }

    func loadObjects<T: PersistentModel>(_ type: T.Type, ids: [UUID]) -> [T] {
        do {
            return try heldOrRead(T.self, ids: ids).compactMap { $0 }
        } catch {
            relationshipError = error
            return []
        }
    }

    func loadReferrers<T: PersistentModel>(_ type: T.Type, field: String, to id: UUID) -> [T] {
        do {
            return try currentReferrers(T.self, field: field, to: [id])[id] ?? []
        } catch {
            relationshipError = error
            return []
        }
    }

    func isDeletedHere(_ object: AnyObject) -> Bool {
        guard let model = object as? any PersistentModel else { return false }
        return tracked.isDeleted(model)
    }

    func relationshipDidChange(of owner: AnyObject, related: [AnyObject]) {
        relationshipGeneration += 1
        for object in related { insertIfNew(object) }
    }
}

/// The operations a context runs on the objects of one model type it holds, without knowing the type.
protocol TrackedTypeOperations {
    func recordChanges(_ context: ModelContext) throws
    func didSave(_ context: ModelContext, merged: [UUID: UUID], written: [UUID]) throws
    func reconcileAfterDeletes(_ context: ModelContext) throws
    func rollBack(_ context: ModelContext)
    func hasChanges(_ context: ModelContext) -> Bool
}

/// ``TrackedTypeOperations`` of `M`.
struct TrackedType<M: PersistentModel>: TrackedTypeOperations {
    func recordChanges(_ context: ModelContext) throws { try context.recordChanges(of: M.self) }
    func didSave(_ context: ModelContext, merged: [UUID: UUID], written: [UUID]) throws {
        try context.didSave(M.self, merged: merged, written: written)
    }
    func reconcileAfterDeletes(_ context: ModelContext) throws { try context.reconcileAfterDeletes(M.self) }
    func rollBack(_ context: ModelContext) { context.rollBack(M.self) }
    func hasChanges(_ context: ModelContext) -> Bool { context.hasChanges(M.self) }
}
