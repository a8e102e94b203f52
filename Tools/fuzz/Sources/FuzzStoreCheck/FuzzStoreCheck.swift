import Foundation
import FuzzSupport
import KVStore
import KVToolCore

// Runs `kvtool check` on random bytes as a store's data file. The seeds are real KVStore stores: the specimen records
// with every field shape and their indexes, enough of them for branch pages, and a store of folders and notes with
// relationships and external values. libFuzzer's mutations of a seed are random byte damage to a real store: flipped
// bytes in pages, cut files, pages copied over others. Whatever the bytes, `check` must end with 0 (clean), 1 (damage
// found) or 2 (the store could not be read), never trap, loop or exhaust memory, and always say something.

/// The folder each input is written to as its `data.mdb`: one per process, rewritten for every input.
let storeDirectory: String = {
    let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath().path
    let path = base + "/fuzz-store-check-\(getpid())"
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        Corpus.fail("cannot create \(path): \(error)")
    }
    return path
}()

/// A folder of notes: deleting it deletes them.
struct Folder: Model {
    var id: UUID
    var name: String

    static let entity = Entity<Folder>(
        indexes: [.unique(\.name)],
        relationships: [.toMany("notes", of: Note.self, inverse: \.folderID, deleteRule: .cascade)])
}

/// A note with a body kept in external storage, in a folder.
struct Note: Model {
    var id: UUID
    var title: String
    var folderID: UUID?
    var body: ExternalData

    static let entity = Entity<Note>(
        indexes: [.index(\.title)], relationships: [.toOne("folder", \.folderID, to: Folder.self)],
        externalStorage: [.attribute(\.body)])
}

/// Makes a store with `fill` in a temporary directory and returns its data file's bytes.
func storeBytes(_ fill: (String) throws -> Void) throws -> [UInt8] {
    let path = NSTemporaryDirectory() + "/fuzz-store-check-seed-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try fill(path)
    return Array(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")))
}

/// The seeds: small real stores of each shape, a few dozen pages each so that inputs stay small.
func seeds() throws -> [[UInt8]] {
    [
        try storeBytes { path in
            let container = try ModelContainer(for: Specimen.self, configuration: ModelConfiguration(path: path))
            try container.write { txn in for sample in Specimen.samples { try txn.insert(sample) } }
            try container.close()
        },
        try storeBytes { path in
            let container = try ModelContainer(for: Specimen.self, configuration: ModelConfiguration(path: path))
            try container.write { txn in for number in 0..<120 { try txn.insert(Specimen.numbered(number)) } }
            try container.close()
        },
        try storeBytes { path in
            let container = try ModelContainer(
                for: Folder.self, Note.self, configuration: ModelConfiguration(path: path))
            try container.write { txn in
                for number in 0..<3 {
                    let folder = Folder(id: UUID.timeOrdered(), name: "folder \(number)")
                    try txn.insert(folder)
                    for size in [0, 100, 5000] {
                        let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number) })
                        try txn.insert(
                            Note(
                                id: UUID.timeOrdered(), title: "note \(size)", folderID: folder.id,
                                body: ExternalData(body)))
                    }
                }
            }
            try container.close()
        },
    ]
}

/// Writes the seeds when asked to; otherwise creates the folder inputs go to.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: Corpus.Arguments) -> CInt {
    Corpus.writeIfRequested(arguments: Corpus.arguments(argc, argv), seeds: seeds)
    _ = storeDirectory
    atexit { try? FileManager.default.removeItem(atPath: storeDirectory) }
    return 0
}

/// Checks one input as a store's data file.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // `fatalError` below is deliberate: it is how a target reports a broken property to libFuzzer, which saves the
    // input as a crash to replay. It never runs in the library or kvtool.
    let bytes = Data(UnsafeRawBufferPointer(start: data, count: size))
    do {
        try bytes.write(to: URL(fileURLWithPath: storeDirectory + "/data.mdb"))
    } catch {
        fatalError("cannot write the input to \(storeDirectory): \(error)")
    }
    let output = StringSink()
    let errors = StringSink()
    let status = KVTool.run(
        arguments: ["check", storeDirectory], console: Console(output: output, errors: errors))
    guard [0, 1, 2].contains(status) else {
        fatalError("check exited \(status), which is not 0, 1 or 2\n\(output.text)\(errors.text)")
    }
    guard status == 0 || errors.text.isEmpty == false || output.text.isEmpty == false else {
        fatalError("check exited \(status) without a word")
    }
    return 0
}
