import Foundation
import LMDB
import SharingModels
import Testing

@testable import KVStore

private struct Memo: Model, Equatable {
    var id = UUID.timeOrdered()
    var text: String
    var scan = ExternalData()
    static let entity = Entity<Memo>(indexes: [.index(\.text)], externalStorage: [.attribute(\.scan)])
}

/// Rewrites a closed store as format 1 wrote it: records without checksums (version 1), no chunk checksums, catalog
/// entries as bare JSON, no generation entry.
func downgradeToFormat1(_ path: String) throws {
    let environment = try Environment.open(path: path)
    defer { try? environment.close() }
    let main = try environment.openTable(named: nil)
    let names = try environment.read { txn in try txn.entries(in: main).map { String(decoding: $0.key, as: UTF8.self) }
    }
    for name in names where name.hasPrefix("records/") {
        let table = try environment.openTable(named: name)
        try environment.write { txn in
            for entry in try txn.entries(in: table) where entry.value.first == RecordFormat.version {
                let body = entry.value.dropFirst().dropLast(RecordFormat.checksumLength)
                try txn.put([RecordFormat.uncheckedVersion] + body, forKey: entry.key, in: table)
            }
        }
    }
    for name in names where name.hasPrefix("checksums/") {
        let table = try environment.openTable(named: name)
        try environment.write { txn in try txn.empty(table) }
    }
    let catalog = try environment.openTable(named: Catalog.tableName)
    try environment.write { txn in
        for entry in try txn.entries(in: catalog) {
            if entry.key == Catalog.generationKey {
                _ = try txn.delete(forKey: entry.key, in: catalog)
                continue
            }
            var json = Array(entry.value.dropFirst(5))
            if entry.key == Catalog.formatKey {
                var format = try JSONDecoder.iso8601.decode(StoreFormat.self, from: Data(json))
                format.formatVersion = 1
                json = Array(try JSONEncoder.iso8601.encode(format))
            }
            try txn.put(json, forKey: entry.key, in: catalog)
        }
    }
}

extension JSONDecoder {
    static var iso8601: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

extension JSONEncoder {
    static var iso8601: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

/// Every record, external chunk and catalog entry carries a checksum: damage is detected, not served; stores of the
/// previous format get theirs in place.
@Suite struct ChecksumStoreTests {
    private static func open(_ path: String) throws -> ModelContainer {
        try ModelContainer(for: Memo.self, configuration: ModelConfiguration(path: path, durability: .off))
    }

    @Test func aChangedByteInsideARecordIsDamageNotAlteredData() throws {
        let directory = StoreDirectory()
        let memo = Memo(text: "aaaaaaaaaaaaaaaa")
        let container = try Self.open(directory.path)
        defer { try? container.close() }
        try container.write { txn in try txn.insert(memo) }
        let records = try container.environment.openTable(named: Catalog.recordTableName("Memo"))
        try container.environment.write { txn in
            var bytes = try #require(try withKey(memo.id) { try txn.value(forKey: $0, in: records) })
            // One letter of the text becomes another: the record still decodes, to other data.
            let position = try #require(bytes.firstIndex(of: UInt8(ascii: "a")))
            bytes[position + 3] = UInt8(ascii: "b")
            try withKey(memo.id) { try txn.put(bytes, forKey: $0, in: records) }
        }
        let error = try #require(throws: KVStoreError.self) {
            try container.read { txn in try txn.model(for: memo.id, as: Memo.self) }
        }
        #expect(error == .damaged)
        #expect(error.entity == "Memo")
        #expect(error.id == memo.id)
        #expect(error.description.contains("table 'records/Memo'"))
        #expect(try integrityErrors(at: directory.path).contains { $0.contains("checksum does not match") })
    }

    @Test func aChangedByteInsideAnExternalChunkIsDamageNotAlteredData() throws {
        let directory = StoreDirectory()
        let memo = Memo(text: "scanned", scan: ExternalData(Data(repeating: 7, count: 600_000)))
        let container = try Self.open(directory.path)
        defer { try? container.close() }
        try container.write { txn in try txn.insert(memo) }
        let chunks = try container.environment.openTable(named: Catalog.externalTableName("Memo"))
        try container.environment.write { txn in
            let entries = try txn.entries(in: chunks)
            var chunk = try #require(entries.last).value
            chunk[100] = 8
            try txn.put(chunk, forKey: try #require(entries.last).key, in: chunks)
        }
        let error = try #require(throws: KVStoreError.self) { try container.data(for: \.scan, of: memo) }
        #expect(error == .damaged)
        #expect(error.description.contains("Chunk 2 of Memo.scan of \(memo.id)"), "\(error)")
        #expect(error.description.contains("checksum does not match"))
        #expect(try integrityErrors(at: directory.path).contains { $0.contains("chunk 2") && $0.contains("damaged") })
    }

    @Test func aChangedByteInACatalogEntryIsDamageAtOpen() throws {
        let directory = StoreDirectory()
        try Self.open(directory.path).close()
        do {
            let environment = try Environment.open(path: directory.path)
            defer { try? environment.close() }
            let catalog = try environment.openTable(named: Catalog.tableName)
            try environment.write { txn in
                var entry = try #require(try txn.value(forKey: Catalog.entityKey("Memo"), in: catalog))
                let position = try #require(entry.firstIndex(of: UInt8(ascii: "t")))
                entry[position] = UInt8(ascii: "T")
                try txn.put(entry, forKey: Catalog.entityKey("Memo"), in: catalog)
            }
        }
        let error = try #require(throws: KVStoreError.self) { try Self.open(directory.path) }
        #expect(error == .damaged)
        #expect(error.description.contains("'entity/Memo'"))
        #expect(error.description.contains("checksum"))
    }

    @Test func aStoreOfTheFormerFormatGetsChecksumsInPlace() throws {
        let directory = StoreDirectory()
        let memos = (0..<25_000).map { Memo(text: "memo \($0 % 100)") }
        let scan = Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0) })
        let scanned = Memo(text: "scanned", scan: ExternalData(scan))
        do {
            let container = try Self.open(directory.path)
            try container.write { txn in for memo in memos + [scanned] { try txn.insert(memo) } }
            try container.close()
        }
        try downgradeToFormat1(directory.path)
        // A former-format store reads before the upgrade: kvtool's check of it is clean.
        #expect(try integrityErrors(at: directory.path) == [])
        let container = try Self.open(directory.path)
        defer { try? container.close() }
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Memo>()) == memos.count + 1)
        #expect(try context.fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.text == "memo 7" })).count == 250)
        #expect(try container.data(for: \.scan, of: scanned) == scan)
        try container.environment.read { txn in
            let format = try Catalog.read(
                StoreFormat.self, key: Catalog.formatKey, in: txn, table: container.catalogTable)
            #expect(format?.formatVersion == Catalog.newStoreFormatVersion)
            let records = try container.store(for: Memo.self).records
            try txn.scan(records) { _, value in
                #expect(value.first == RecordFormat.version)
                return true
            }
            let external = try #require(try container.store(for: Memo.self).externalTable)
            let checksums = try #require(external.checksums)
            #expect(try txn.count(of: checksums) == 3)
        }
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test(arguments: 0..<3)
    func anUpgradeKilledPartWayFinishesOnTheNextOpen(round: Int) throws {
        let directory = StoreDirectory()
        let notes = (0..<60_000).map { NotesV1.Note(title: "note \($0 % 100)", body: "a b c") }
        do {
            let container = try ModelContainer(for: NotesV1.self, configuration: sharingConfiguration(directory.path))
            try container.write { txn in for note in notes { try txn.insert(note) } }
            try container.close()
        }
        try downgradeToFormat1(directory.path)
        let child = try ChildProcess(["write", directory.path, "v1", "0", "none"])
        usleep(UInt32.random(in: 20_000...150_000))
        child.kill()
        let container = try ModelContainer(for: NotesV1.self, configuration: sharingConfiguration(directory.path))
        defer { try? container.close() }
        let stored = try ModelContext(container).fetch(FetchDescriptor<NotesV1.Note>())
        #expect(Set(stored.map(\.id)) == Set(notes.map(\.id)))
        #expect(try integrityErrors(at: directory.path) == [])
    }
}
