import Foundation
import LMDB

extension EntityStore {
    /// The first `limit` models that `descriptor`'s predicate matches and that come after `last` in its order (its
    /// sort descriptors, then ID order), among the stored models but those in `excluded`, and the `extra` ones (a
    /// context's own versions of those, which this checks against the predicate). The descriptor's offset and limit
    /// are the caller's business.
    ///
    /// Only `limit` models are held at a time. A listing in ID order (no sort descriptor) over the record table, and
    /// one an index reads in the sort's order, stop once the page is full; a scan that skips to the models after
    /// `last` starts after its record key. Other sorts read every match and keep the first ones.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when a record does not decode, what the predicate throws.
    func page(
        _ descriptor: FetchDescriptor<M>, after last: M?, limit: Int, excluding excluded: Set<UUID>, adding extra: [M],
        in txn: borrowing Transaction
    ) throws -> [M] {
        var first = FirstModels(descriptor, limit: limit)
        func isAfterLast(_ model: M) -> Bool {
            last.map { descriptor.precedes($0, model) } ?? true
        }
        for model in extra where try isAfterLast(model) && descriptor.matches(model) { first.offer(model) }
        guard limit > 0 else { return [] }
        let planned = try plan(descriptor.unpaged, in: txn)
        let isExact = planned.isExact || descriptor.predicate == nil
        // The stored models offered so far; in an ordered walk, once `limit` of them are, the rest come after.
        var offered = 0
        let reader = self.reader
        if descriptor.sortBy.isEmpty, case .scan = planned.plan {
            let start = last.map { model in withKey(model.id) { KeyRange.from(Array($0)) } } ?? .all
            try txn.scanEntries(records, in: start) { key, value in
                let id = UUID(bytes: key)
                if let last, id == last.id { return true }
                if !excluded.isEmpty, excluded.contains(id) { return true }
                let model = try decode(value, id: id, reader: reader)
                guard try isExact || descriptor.matches(model) else { return true }
                first.offer(model)
                offered += 1
                return offered < limit
            }
            return first.models
        }
        let isOrdered = planned.isSorted && !descriptor.sortBy.isEmpty
        try forEachCandidate(planned.plan, in: txn, reader: reader) { model in
            if !excluded.isEmpty, excluded.contains(model.id) { return true }
            guard isAfterLast(model), try isExact || descriptor.matches(model) else { return true }
            first.offer(model)
            offered += 1
            return !isOrdered || offered < limit
        }
        return first.models
    }
}
