import Foundation
import KVStore
import KVStoreInspection
import TestSupport
import Testing

@testable import KVToolCore

/// A copy kept in step with its source by incremental exports: bootstrapped from a full export, then after each round
/// of random changes to the source, `export --since` the last token and `import` into the copy, which must then hold
/// the same models as the source.
@Suite struct IncrementalSyncTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func aCopyFollowsItsSourceThroughIncrementalExports(seed: UInt64) throws {
        let source = TemporaryStore()
        let copy = source.sibling("copy")
        let container = try HistoryTesting.container(source.path, author: "app")
        defer { try? container.close() }
        try container.enableHistory(retention: .unlimited)
        var workload = SyncWorkload(seed: seed)
        try workload.run(commits: 20, on: container)

        // The bootstrap: a full export records the last token, where the copy goes on from.
        let full = source.sibling("full.jsonl")
        let exported = kvtool("export", source.path, "--output", full)
        try #require(exported.status == 0, "\(exported.errors)")
        var token = try #require(try HistoryTesting.headerMember("through", of: full))
        #expect(token == (try container.lastHistoryToken()).description)
        #expect(exported.output.hasSuffix(", through history token \(token), to \(full).\n"))
        let bootstrap = kvtool("import", copy, full)
        try #require(bootstrap.status == 0, "\(bootstrap.errors)")
        #expect(try HistoryTesting.exportedModels(copy) == HistoryTesting.exportedModels(source.path))

        for round in 1...5 {
            try workload.run(commits: 15, on: container)
            let changes = source.sibling("round-\(round).jsonl")
            let export = kvtool("export", source.path, "--since", token, "--output", changes)
            try #require(export.status == 0, "round \(round): \(export.errors)")
            #expect(try HistoryTesting.headerMember("since", of: changes) == token)
            let through = try #require(try HistoryTesting.headerMember("through", of: changes))
            #expect(through == (try container.lastHistoryToken()).description)
            let applied = kvtool("import", copy, changes)
            try #require(applied.status == 0, "round \(round): \(applied.errors)")
            #expect(
                try HistoryTesting.exportedModels(copy) == HistoryTesting.exportedModels(source.path),
                "round \(round) of seed \(seed)")
            ImportTesting.expectClean(copy)
            token = through
        }
        // The workload reached what an incremental export must carry as changes of their own.
        let kinds = Set(try container.history().flatMap(\.changes).map { HistoryPrinter.kindName($0.kind) })
        #expect(kinds == ["inserted", "updated", "deleted", "cascaded", "nullified"], "seed \(seed)")
        // An export after the last one holds no change, and changes nothing.
        let empty = source.sibling("empty.jsonl")
        #expect(kvtool("export", source.path, "--since", token, "--output", empty).status == 0)
        #expect(try HistoryTesting.lines(of: empty).count == 2)
        #expect(kvtool("import", copy, empty).status == 0)
        #expect(try HistoryTesting.exportedModels(copy) == HistoryTesting.exportedModels(source.path))
    }
}
