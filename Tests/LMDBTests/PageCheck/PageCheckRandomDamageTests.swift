import Foundation
import LMDB
import TestSupport
import Testing

/// Random damage to a real store: whatever bytes change, the page check returns a report, without crashing,
/// looping or running out of memory. (The fuzz target `FuzzPageCheck` in Tools/fuzz does the same for longer.)
@Suite struct PageCheckRandomDamageTests {
    @Test func randomByteFlipsNeverCrashTheCheck() throws {
        try PageCheckStores.withClosedStore(PageCheckDamageTests.fill) { path, _ in
            let original = try RawStore(path: path)
            let pageSize = original.pageSize
            let pages = original.bytes.count / pageSize
            let directory = try TemporaryDirectory()
            let file = directory.appending("damaged.mdb")
            var damaged = 0
            for seed in 0..<300 {
                var random = SplitMix64(seed: UInt64(seed))
                var bytes = original.bytes
                for _ in 0..<Int.random(in: 1...12, using: &random) {
                    // Half the flips hit the parts that steer the walk: page headers and node offsets.
                    let page = Int.random(in: 0..<pages, using: &random)
                    let offset =
                        Bool.random(using: &random)
                        ? Int.random(in: 0..<64, using: &random) : Int.random(in: 0..<pageSize, using: &random)
                    bytes[page * pageSize + offset] ^= UInt8.random(in: 1...255, using: &random)
                }
                if seed % 10 == 0 { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &random)) }
                try Data(bytes).write(to: URL(fileURLWithPath: file))
                let scope: PageCheck.Scope = seed % 3 == 0 ? .roots : .full
                let report = try PageCheck.checkFile(path: file, options: .init(scope: scope, maxProblems: 50))
                #expect(report.problems.count <= 50, "seed \(seed)")
                if !report.isClean { damaged += 1 }
            }
            // Most flips land in values or free space, which the check cannot see, but many do not.
            #expect(damaged > 50)
        }
    }
}
