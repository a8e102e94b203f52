import Foundation
import LMDB
import Testing

@testable import KVStore

/// A store whose data file ends before its snapshot's last page, as LMDB leaves it when a transaction frees pages it
/// allocated: those pages are never written, and the file is healthy.
@Suite struct ShortFileTests {
    @Test func pagesATransactionAllocatedAndFreedLeaveAHealthyStore() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path)
        do {
            let container = try ModelContainer(for: PhotoE.self, configuration: configuration)
            for round in 0..<2 {
                try container.write { txn in
                    let photo = PhotoE(title: "gone \(round)", image: ExternalData(patternBytes(300_000, seed: 3)))
                    try txn.insert(photo)
                    _ = try txn.delete(PhotoE.self, id: photo.id)
                }
            }
            try container.close()
        }
        let container = try ModelContainer(for: PhotoE.self, configuration: configuration)
        defer { try? container.close() }
        #expect(try container.read { txn in try txn.fetchCount(FetchDescriptor<PhotoE>()) } == 0)
        let report = try container.environment.checkPages(scope: .full, maxProblems: 20)
        #expect(report.isClean, "\(report.problems)")
        // The file does end before the snapshot's last page, and the check says why that is no damage.
        #expect(report.problems.contains { $0.kind == .truncatedFile && $0.severity == .note })
        // The store goes on: its next writes reuse the free pages.
        try container.write { txn in
            try txn.insert(PhotoE(title: "kept", image: ExternalData(patternBytes(5_000, seed: 4))))
        }
        #expect(try container.read { txn in try txn.fetchCount(FetchDescriptor<PhotoE>()) } == 1)
    }

    @Test func aFileCutShortInsidePagesThatTreesReachIsStillRefused() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path)
        do {
            let container = try ModelContainer(for: PhotoE.self, configuration: configuration)
            try container.write { txn in
                for index in 0..<40 {
                    try txn.insert(PhotoE(title: "kept \(index)", image: ExternalData(patternBytes(20_000, seed: 5))))
                }
            }
            try container.close()
        }
        let file = directory.path + "/data.mdb"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.truncate(atOffset: UInt64(size / 2 / 4096 * 4096))
        try handle.close()
        #expect(throws: KVStoreError.damaged) { try ModelContainer(for: PhotoE.self, configuration: configuration) }
    }
}
