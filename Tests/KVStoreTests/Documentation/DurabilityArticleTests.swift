import Foundation
import KVStore
import TestSupport
import Testing

// The examples of the article "Durability and crashes".

@Suite struct DurabilityArticleTests {
    @Test func aBulkLoadAtOffThenSyncKeepsEverything() throws {
        let directory = StoreDirectory()
        let path = directory.path
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let rows = (0..<5_000).map { ("s\($0 % 7)", Double($0 % 40), start + Double($0)) }
        // Example: begin durability bulk load
        // A bulk load that can start over if the machine goes down: commits don't wait for the disk.
        let loader = try ModelContainer(
            for: Reading.self, configuration: ModelConfiguration(path: path, durability: .off))
        let context = ModelContext(loader)
        try context.insert(
            contentsOf: rows.lazy.map { Reading(sensor: $0.0, celsius: $0.1, takenAt: $0.2) }, chunkSize: 1_000)
        try loader.sync()  // everything loaded is on disk now
        try loader.close()

        // The service that follows may lose its last commit to a power cut, never the store.
        let service = try ModelContainer(
            for: Reading.self, configuration: ModelConfiguration(path: path, durability: .normal))
        // Example: end durability bulk load
        defer { try? service.close() }
        #expect(service.durability == .normal)
        #expect(try ModelContext(service).fetchCount(FetchDescriptor<Reading>()) == 5_000)
    }

    @Test func theArticleShowsTheExamplesAsTested() throws {
        #expect(try documentationDifferences([("durability bulk load", 8)], testedIn: #filePath) == [])
    }
}
