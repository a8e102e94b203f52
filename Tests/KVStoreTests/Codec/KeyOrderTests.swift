import Foundation
import Testing

@testable import KVStore

/// The order in which a batch fetch looks its IDs up.
@Suite struct KeyOrderTests {
    /// The first `count` bytes of an ID as an integer, which compares as the key's bytes do.
    static func leading(_ id: UUID, bytes count: Int) -> UInt64 {
        withUnsafeBytes(of: id.uuid) { $0.prefix(count).reduce(0) { $0 << 8 | UInt64($1) } }
    }

    /// IDs compare as their bytes do, the order of record keys, including IDs that differ in one byte only.
    @Test func idsCompareAsTheirKeysBytes() {
        var ids = (0..<200).map { _ in UUID() }
        let base = UUID()
        for position in 0..<16 {
            var bytes = base.uuid
            withUnsafeMutableBytes(of: &bytes) { $0[position] &+= 1 }
            ids += [base, UUID(uuid: bytes)]
        }
        for (lhs, rhs) in zip(ids, ids.shuffled()) {
            let byBytes = withUnsafeBytes(of: lhs.uuid) { left in
                withUnsafeBytes(of: rhs.uuid) { right in left.lexicographicallyPrecedes(right) }
            }
            #expect(lhs.isOrdered(before: rhs) == byBytes)
            #expect(rhs.isOrdered(before: lhs) == (!byBytes && lhs != rhs))
        }
    }

    @Test(arguments: [0, 1, 2, 1_000, 65_536])
    func aBatchIsOrderedByItsKeysLeadingBytes(count: Int) {
        // Random IDs, and time-ordered ones shuffled, as a batch of fetched IDs usually is.
        for ids in [(0..<count).map { _ in UUID() }, (0..<count).map { _ in UUID.timeOrdered() }.shuffled()] {
            let order = keyOrder(of: ids)
            #expect(order.sorted() == Array(ids.indices))
            // At least the first six bytes, the timestamp of a time-ordered ID, are in order.
            let leading = order.map { Self.leading(ids[$0], bytes: 6) }
            #expect(zip(leading, leading.dropFirst()).allSatisfy { $0 <= $1 })
        }
    }

    @Test func aLargerBatchIsOrderedByItsKeysFirstEightBytes() {
        // Random IDs practically never share eight bytes, so that is their whole order.
        let ids = (0..<65_537).map { _ in UUID() }
        let order = keyOrder(of: ids)
        #expect(order.sorted() == Array(ids.indices))
        let leading = order.map { Self.leading(ids[$0], bytes: 8) }
        #expect(zip(leading, leading.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func theExactOrderPutsEqualIDsTogether() {
        // A hundred IDs made within a millisecond or two, twenty times each, as the projects of a chunk of tasks.
        let distinct = (0..<100).map { _ in UUID.timeOrdered() }
        let ids = (0..<20).flatMap { _ in distinct }.shuffled()
        let order = exactKeyOrder(of: ids)
        #expect(order.sorted() == Array(ids.indices))
        let runs = order.map { ids[$0] }.chunked(by: ==)
        #expect(runs.count == distinct.count)
        #expect(runs.map(\.first) == distinct.sorted { $0.uuidString < $1.uuidString })
    }

    @Test func repeatedIDsKeepEveryPosition() {
        let id = UUID.timeOrdered()
        let ids = [id, UUID.timeOrdered(), id, id]
        let order = keyOrder(of: ids)
        #expect(order.sorted() == [0, 1, 2, 3])
        // A batch of one ID repeated has no byte to sort by.
        #expect(keyOrder(of: Array(repeating: id, count: 1_000)).sorted() == Array(0..<1_000))
    }
}

extension Array {
    /// The runs of consecutive elements that `belong` says go together.
    fileprivate func chunked(by belong: (Element, Element) -> Bool) -> [[Element]] {
        var runs: [[Element]] = []
        for element in self {
            if let last = runs.last?.last, belong(last, element) {
                runs[runs.count - 1].append(element)
            } else {
                runs.append([element])
            }
        }
        return runs
    }
}

/// Reading a UUID from bytes, as record keys, index keys and records store it.
@Suite struct UUIDBytesTests {
    @Test func aUUIDReadsFromItsBytesAtAnyAlignment() throws {
        let id = UUID()
        var bytes: [UInt8] = [0xAA]
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
        bytes += [0xBB, 0xCC]
        try bytes.withBorrowedBytes { bytes throws in
            // At offset 1, unaligned; with bytes after it, which are ignored.
            #expect(bytes.loadUUID(fromByteOffset: 1) == id)
            #expect(UUID(bytes: bytes.extracting(1...)) == id)
            // Fewer than 16 bytes are zero-filled.
            let short = UUID(bytes: bytes.extracting(1..<4))
            #expect(short.uuidString.hasPrefix(id.uuidString.prefix(6)))
            #expect(short.uuidString.hasSuffix("0000-000000000000"))
        }
    }
}
