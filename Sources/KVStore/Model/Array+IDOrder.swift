import Foundation

extension Array where Element: StoredModel {
    /// Sorts the models into the order of their IDs' bytes, the order of their record keys; models with equal IDs
    /// keep the order they had, so that of two versions of one model in a chunk the later one is still written last.
    ///
    /// The standard library's `sort(by:)`, called from code generic over the model, is its unspecialized code: it
    /// moves models through their value witnesses at every comparison and every shift of its insertion sort, about
    /// 19,000 instructions a model for a chunk of 10,000 random IDs, more than writing the model. Here the IDs are
    /// sorted as integers beside the models' positions, a sort of a concrete type, and each model is then moved once.
    /// IDs already in order (time-ordered UUIDs, models read in key order) cost one pass and no move.
    mutating func sortByID() {
        guard let positions = Self.idOrder(of: self) else { return }
        let sink = ModelSink<Element>()
        for position in positions { sink.append(self[position]) }
        self = sink.take()
    }

    /// The models sorted as ``sortByID()`` sorts them.
    func sortedByID() -> [Element] {
        var models = self
        models.sortByID()
        return models
    }

    /// The positions of `models` in the order of their IDs, equal IDs by position; `nil` when they are in that
    /// order already.
    private static func idOrder(of models: [Element]) -> [Int]? {
        guard models.count > 1 else { return nil }
        var keys: [IDPosition] = []
        keys.reserveCapacity(models.count)
        var isSorted = true
        // By index: `enumerated()`'s iterator, unspecialized for a generic element, costs 1,500 instructions a model.
        for position in models.indices {
            let key = IDPosition(halves: models[position].id.orderedHalves, position: position)
            if isSorted, let last = keys.last, key.halves < last.halves { isSorted = false }
            keys.append(key)
        }
        guard !isSorted else { return nil }
        keys.sort { ($0.halves.0, $0.halves.1, $0.position) < ($1.halves.0, $1.halves.1, $1.position) }
        return keys.map(\.position)
    }
}

/// An ID, as the two integers that compare as its bytes do, and the position of its model.
private struct IDPosition {
    var halves: (UInt64, UInt64)
    var position: Int
}
