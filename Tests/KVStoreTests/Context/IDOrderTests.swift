import Foundation
import Testing

@testable import KVStore

/// A model whose `sequence` tells apart two versions of one ID.
struct SequencedItem: Model, Equatable {
    var id: UUID
    var sequence: Int
    var label: String

    static let entity = Entity<SequencedItem>()
}

/// Sorting models by ID (``Swift/Array/sortByID()``), which chunked inserts, sorted fetches and grouped children use.
@Suite struct IDOrderTests {
    /// The order of record keys: the IDs' bytes compared one by one.
    private func bytesPrecede(_ left: UUID, _ right: UUID) -> Bool {
        withUnsafeBytes(of: left.uuid) { left in
            withUnsafeBytes(of: right.uuid) { right in left.lexicographicallyPrecedes(right) }
        }
    }

    /// Models of `count` random IDs, some of them repeated, each with its position as its sequence.
    private func randomItems(count: Int, repeatingEvery stride: Int) -> [SequencedItem] {
        var items: [SequencedItem] = []
        for position in 0..<count {
            let id = position % stride == stride - 1 && !items.isEmpty ? items[position / 2].id : UUID()
            items.append(SequencedItem(id: id, sequence: position, label: "item \(position)"))
        }
        return items
    }

    @Test func randomIDsComeInKeyOrderAndRepeatedIDsKeepTheirOrder() {
        let items = randomItems(count: 2_000, repeatingEvery: 7)
        var sorted = items
        sorted.sortByID()
        // The reference: a sort by the IDs' bytes, ties by position, through the standard library.
        let expected = items.sorted { left, right in
            if left.id == right.id { return left.sequence < right.sequence }
            return bytesPrecede(left.id, right.id)
        }
        #expect(sorted == expected)
        #expect(items.sortedByID() == expected)
        #expect(Set(sorted.map(\.id)).count < sorted.count, "the test has repeated IDs")
    }

    @Test func modelsInOrderAlreadyStayAsTheyAre() {
        let ordered = (0..<500).map { SequencedItem(id: UUID.timeOrdered(), sequence: $0, label: "") }
        var sorted = ordered
        sorted.sortByID()
        #expect(sorted == ordered)
        var reversed = Array(ordered.reversed())
        reversed.sortByID()
        #expect(reversed == ordered)
    }

    @Test func emptyAndSingleLists() {
        var none: [SequencedItem] = []
        none.sortByID()
        #expect(none.isEmpty)
        let one = [SequencedItem(id: UUID(), sequence: 1, label: "one")]
        #expect(one.sortedByID() == one)
    }

    @Test func aChunkedInsertOfOneIDTwiceKeepsTheLaterVersion() throws {
        try withContainer(SequencedItem.self) { container throws in
            let items = randomItems(count: 3_000, repeatingEvery: 5)
            let context = ModelContext(container)
            // Chunks of 1,000: some repeats fall in their original's chunk, others in a later one.
            #expect(try context.insert(contentsOf: items, chunkSize: 1_000) == items.count)
            var latest: [UUID: SequencedItem] = [:]
            for item in items { latest[item.id] = item }
            let stored = try container.read { txn in try txn.fetch(FetchDescriptor<SequencedItem>()) }
            #expect(stored.count == latest.count)
            #expect(stored == latest.values.sorted { bytesPrecede($0.id, $1.id) })
        }
    }
}
