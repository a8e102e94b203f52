import Foundation
import KVStore
import KVStoreInspection
import TestSupport
import Testing

@testable import KVToolCore

/// A folder whose notes go with it (cascade); its name is unique, and its tombstone keeps it.
struct SyncFolder: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    var color: String?

    static let entity = Entity<SyncFolder>(
        name: "Folder", indexes: [.unique(\.name)],
        relationships: [.toMany("notes", of: SyncNote.self, inverse: \.folderID, deleteRule: .cascade)],
        preservedOnDeletion: [\.name])
}

/// A note in a folder, with labels and an attachment kept in external storage; its tombstone keeps its title and
/// tags.
struct SyncNote: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var body = ""
    var tags: [String] = []
    var folderID: UUID?
    var labelIDs: [UUID] = []
    var attachment = ExternalData()

    static let entity = Entity<SyncNote>(
        name: "Note", indexes: [.index(\.title)],
        relationships: [
            .toOne("folder", \.folderID, to: SyncFolder.self, inverse: "notes"),
            .toMany("labels", \.labelIDs, to: SyncLabel.self, inverse: "notes"),
        ],
        externalStorage: [.attribute(\.attachment)], preservedOnDeletion: [\.title, \.tags])
}

/// A label of notes: deleting one removes it from its notes (nullify).
struct SyncLabel: Model, Equatable {
    var id = UUID.timeOrdered()
    var text: String

    static let entity = Entity<SyncLabel>(
        name: "Label",
        relationships: [.toMany("notes", of: SyncNote.self, inverse: \.labelIDs, deleteRule: .nullify)])
}

/// Stores of folders, notes and labels with their history on, and what kvtool prints of them.
enum HistoryTesting {
    /// Opens the store at `path` for the sync models, with `author` as every commit's history author.
    static func container(_ path: String, author: String? = nil) throws -> ModelContainer {
        var configuration = ModelConfiguration(path: path)
        configuration.historyAuthor = author
        return try ModelContainer(for: SyncFolder.self, SyncNote.self, SyncLabel.self, configuration: configuration)
    }

    /// The export of a store without its header, which differs between a store and its copy (the creation time, the
    /// catalog's order of field names, the history token): its record, chunk and end lines.
    static func exportedModels(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let result = kvtool("export", path)
        try #require(result.status == 0, "export of \(path): \(result.errors)", sourceLocation: sourceLocation)
        return Array(result.output.split(separator: "\n").dropFirst().map(String.init))
    }

    /// The export header's member `name`, a string, from an export file.
    static func headerMember(_ name: String, of file: String) throws -> String? {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let first = try #require(text.split(separator: "\n").first)
        guard case .string(let value)? = try JSONParser.parse(Array(first.utf8))[member: name] else { return nil }
        return value
    }

    /// The lines of an export file.
    static func lines(of file: String) throws -> [String] {
        try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// Writes `bytes` at the key of history entry `position` of the store at `path` (closed), through the LMDB
    /// binding: a damaged entry.
    static func overwriteEntry(_ position: UInt64, with bytes: [UInt8], at path: String) throws {
        try withEnvironment(at: path) { environment in
            let table = try environment.openTable(named: Catalog.historyTableName)
            try environment.write { txn in
                try txn.put(bytes, forKey: withUnsafeBytes(of: position.bigEndian, Array.init), in: table)
            }
        }
    }
}

/// A random workload on a store of folders, notes and labels: inserts, updates, deletes with cascades and
/// nullifications, a commit each.
///
/// One change per commit: a commit that writes an external value and deletes it again (a note inserted with its
/// attachment, then cascaded by its folder's delete) frees pages it allocated at the end of the file, which LMDB then
/// never writes, and the page check that every kvtool command runs refuses such a file as cut short (a false alarm of
/// `PageCheck`, outside kvtool).
struct SyncWorkload {
    var generator: SplitMix64
    /// Folder names are never given twice, so no two commits swap or reuse a unique value.
    private var nextName = 0

    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    /// Runs `commits` commits of a random change each.
    mutating func run(commits: Int, on container: ModelContainer) throws {
        for _ in 0..<commits {
            try container.write { txn in try change(txn) }
        }
    }

    /// One random change.
    private mutating func change(_ txn: borrowing ModelTransaction) throws {
        let folders = try txn.fetch(FetchDescriptor<SyncFolder>())
        let notes = try txn.fetch(FetchDescriptor<SyncNote>())
        let labels = try txn.fetch(FetchDescriptor<SyncLabel>())
        switch Int.random(in: 0..<100, using: &generator) {
        case 0..<12:
            nextName += 1
            try txn.insert(SyncFolder(id: newID(), name: "folder \(nextName) \(generator.text())"))
        case 12..<20:
            try txn.insert(SyncLabel(id: newID(), text: generator.text()))
        case 20..<45:
            try txn.insert(newNote(folders: folders, labels: labels))
        case 45..<70 where !notes.isEmpty:
            var note = generator.pick(notes)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: note.title = generator.text()
            case 1: note.tags = (0..<Int.random(in: 0...3, using: &generator)).map { _ in generator.text() }
            case 2: note.folderID = folders.isEmpty || generator.chance(20) ? nil : generator.pick(folders).id
            case 3: note.labelIDs = labels.isEmpty ? [] : [generator.pick(labels).id]
            default: note.attachment = attachment()
            }
            try txn.insert(note)
        case 70..<78 where !folders.isEmpty:
            var folder = generator.pick(folders)
            if generator.chance(50) {
                nextName += 1
                folder.name = "folder \(nextName) renamed"
            } else {
                folder.color = generator.chance(30) ? nil : generator.pick(["red", "green", "blue"])
            }
            try txn.insert(folder)
        case 78..<88 where !notes.isEmpty:
            _ = try txn.delete(SyncNote.self, id: generator.pick(notes).id)
        case 88..<95 where !folders.isEmpty:
            _ = try txn.delete(SyncFolder.self, id: generator.pick(folders).id)
        case 95..<100 where !labels.isEmpty:
            _ = try txn.delete(SyncLabel.self, id: generator.pick(labels).id)
        default:
            try txn.insert(newNote(folders: folders, labels: labels))
        }
    }

    private mutating func newNote(folders: [SyncFolder], labels: [SyncLabel]) -> SyncNote {
        SyncNote(
            id: newID(), title: generator.text(), body: generator.chance(50) ? generator.text() : "",
            tags: (0..<Int.random(in: 0...2, using: &generator)).map { _ in generator.text() },
            folderID: folders.isEmpty || generator.chance(20) ? nil : generator.pick(folders).id,
            labelIDs: labels.isEmpty || generator.chance(50) ? [] : [generator.pick(labels).id],
            attachment: attachment())
    }

    /// A new ID from the seed, so that a seed makes the same models, in the same key order, in every run.
    private mutating func newID() -> UUID {
        var bytes = withUnsafeBytes(of: (generator.next(), generator.next())) { Array($0) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// No attachment, a small one, or now and then one of several chunks.
    private mutating func attachment() -> ExternalData {
        switch Int.random(in: 0..<20, using: &generator) {
        case 0: return ExternalData(generator.bytes(300_000))
        case 1..<8: return ExternalData(generator.bytes(Int.random(in: 1...2_000, using: &generator)))
        default: return ExternalData()
        }
    }
}
