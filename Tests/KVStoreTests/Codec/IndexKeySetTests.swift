import Foundation
import Testing

@testable import KVStore

@Suite struct IndexKeySetTests {
    @Test func keepsEachIndexsKeysInOrderAndFindsThem() {
        var set = IndexKeySet()
        #expect(set.isEmpty)
        set.append(index: 0) { $0 += [1, 2] }
        set.append(index: 1) { $0 += [3] }
        set.append(index: 0) { $0 += [4, 5, 6] }
        #expect(set.keys(of: 0) == [[1, 2], [4, 5, 6]])
        #expect(set.keys(of: 1) == [[3]])
        #expect(set.keys(of: 2) == [])
        [UInt8]([4, 5, 6]).withBorrowedBytes { #expect(set.contains($0, of: 0)) }
        [UInt8]([4, 5, 6]).withBorrowedBytes { #expect(!set.contains($0, of: 1)) }
        [UInt8]([4, 5]).withBorrowedBytes { #expect(!set.contains($0, of: 0)) }
        set.removeAll()
        #expect(set.isEmpty)
        #expect(set.keys(of: 0) == [])
    }

    @Test func leavesOutARepeatedKeyOfTheSameIndexOnlyWhenAsked() {
        var set = IndexKeySet()
        set.append(index: 0, unique: true) { $0 += [7] }
        set.append(index: 1, unique: true) { $0 += [7] }
        set.append(index: 0, unique: true) { $0 += [7] }
        set.append(index: 0) { $0 += [7] }
        set.append(index: 0, unique: true) { $0 += [8] }
        #expect(set.keys(of: 0) == [[7], [7], [8]])
        #expect(set.keys(of: 1) == [[7]])
    }

    @Test func cutsALongKeyAsALongKeyAloneIsCut() {
        let long = [UInt8](repeating: 0x61, count: IndexKey.maximumLength + 100)
        var set = IndexKeySet()
        set.append(index: 0) { $0 += [1, 2, 3] }
        set.append(index: 0) { $0 += long }
        #expect(set.keys(of: 0) == [[1, 2, 3], IndexKey.finalized(long)])
        #expect(IndexKey.finalized(long).count <= IndexKey.maximumLength)
    }

    @Test(arguments: [3, 40])
    func aMultiEntryIndexHasOneKeyPerDistinctElement(count: Int) {
        let ids = (0..<count).map { _ in UUID() }
        let recipe = Recipe(
            title: "r", course: .main, ingredients: [], steps: [], nutrition: [:], ratings: [:], tags: [],
            source: .family, tagIDs: ids + ids.reversed() + [ids[0]])
        let index = Recipe.entity.indexes.first { $0.name == "tagIDs" }
        let keys = index?.keys(recipe, longKeyHash: .standard).map(\.key) ?? []
        let expected = ids.map { id -> [UInt8] in
            var key: [UInt8] = []
            id.appendIndexKey(to: &key)
            return key
        }
        #expect(keys == expected)
    }
}
