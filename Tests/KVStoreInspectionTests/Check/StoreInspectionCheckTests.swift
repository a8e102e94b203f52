import Foundation
import KVStore
import KVStoreInspection
import LMDB
import Testing

/// `StoreInspection.check`: what it reports of a clean store and of a record whose bytes changed, collected or
/// streamed.
@Suite struct StoreInspectionCheckTests {
    /// Changes one byte of the stored title of `book`, leaving its checksum as it was.
    private static func changeTitleByte(of book: Book, in store: borrowing TemporaryStore) throws {
        try store.withEnvironment { environment in
            let records = try environment.openTable(named: Catalog.recordTableName("Book"))
            try environment.write { txn in
                var value = try #require(try txn.value(forKey: keyBytes(book.id), in: records))
                let title = Array(book.title.utf8)
                let start = try #require(
                    value.indices.first { value[$0...].starts(with: title) }, "the title is stored as UTF-8")
                value[start] ^= 0x20
                try txn.put(value, forKey: keyBytes(book.id), in: records)
            }
        }
    }

    @Test func aCleanStoreHasNoProblems() throws {
        let store = TemporaryStore()
        try store.write(handles: [Handle(path: "/etc/hosts")])
        let report = try StoreInspection.check(path: store.path)
        #expect(report.problems == [])
        #expect(report.isConsistent)
        #expect(report.summary.errorCount == 0 && report.summary.warningCount == 0)
        #expect(report.summary.statistics.entities == 2)
        #expect(report.summary.statistics.records == sampleBooks.count + 1)
    }

    @Test func aChangedByteInARecordIsAnErrorNamingItsEntityAndID() throws {
        let store = TemporaryStore()
        try store.write()
        let damaged = sampleBooks[1]
        try Self.changeTitleByte(of: damaged, in: store)
        let report = try StoreInspection.check(path: store.path)
        #expect(!report.isConsistent)
        let problem = try #require(report.errors.first)
        #expect(report.errors.count == 1, "\(report.problems)")
        #expect(problem.severity == .error)
        #expect(problem.entity == "Book")
        #expect(problem.id == damaged.id)
        #expect(problem.part == nil)
        let size = try store.withEnvironment { environment in
            let records = try environment.openTable(named: Catalog.recordTableName("Book"))
            return try environment.read { txn in try txn.value(forKey: keyBytes(damaged.id), in: records)?.count }
        }
        #expect(
            problem.message
                == "Book \(damaged.id): the record does not decode: Corrupt record at byte \(size ?? -1): its "
                + "checksum does not match its bytes")
        #expect(problem.description == "error: " + problem.message)
        #expect(report.summary.errorCount == 1)
    }

    @Test func aRecordWithAFieldTheCatalogDoesNotNameIsAnError() throws {
        let store = TemporaryStore()
        try store.write()
        // The catalog loses the last name interned, pages, as a stale catalog write would lose it.
        try store.withEnvironment { environment in
            let catalog = try environment.openTable(named: Catalog.tableName)
            try environment.write { txn in
                var entry = try #require(
                    try Catalog.read(EntityCatalog.self, key: Catalog.entityKey("Book"), in: txn, table: catalog))
                #expect(entry.fields.names == ["id", "title", "shelf", "pages"])
                var fields = FieldTable()
                for name in entry.fields.names.dropLast() {
                    let id = fields.id(for: name, in: .topLevel)
                    if let kind = entry.fields.kind(of: id) { fields.observe(kind, for: id) }
                }
                entry.fields = fields
                try Catalog.write(entry, key: Catalog.entityKey("Book"), in: txn, table: catalog)
            }
        }
        let report = try StoreInspection.check(path: store.path)
        #expect(report.errors.map(\.id) == sampleBooks.map(\.id))
        for (problem, book) in zip(report.errors, sampleBooks) {
            #expect(
                problem.message
                    == "Book \(book.id): the record holds values under field ids that the catalog's field table does "
                    + "not name (4): they do not read; the catalog lost names that a writer interned")
        }
    }

    @Test func theStreamingCheckDeliversTheSameProblemsInTheSameOrder() throws {
        let store = TemporaryStore()
        try store.write()
        try Self.changeTitleByte(of: sampleBooks[0], in: store)
        try Self.changeTitleByte(of: sampleBooks[3], in: store)
        let report = try StoreInspection.check(path: store.path, chunkSize: 2)
        var streamed: [CheckProblem] = []
        let summary = try StoreInspection.check(path: store.path, chunkSize: 2) { streamed.append($0) }
        #expect(report.errors.map(\.id) == [sampleBooks[0].id, sampleBooks[3].id])
        #expect(streamed == report.problems)
        #expect(summary == report.summary)
        #expect(summary.errorCount == 2)
    }
}
