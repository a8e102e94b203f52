import Foundation
import KVStore
import SharingModels
import Synchronization

// A child process of the multi-process tests. It works on a store as the test says and reports on standard output,
// one line per event, flushed at once, so the parent knows what was acknowledged before it kills or waits:
//
//   ready                 the container is open
//   saved <uuid>          a save committed
//   migrated              the migration ended
//   staged                a streamed value has chunks staged
//   rejected <title>      a save refused by a unique constraint; the writer goes on
//   error <kind> <text>   a KVStore error ended the work (exit status 3)
//
// Usage: SharingHelper <command> <path> [arguments]
//   write <path> <v1|plain|unique|removing|upsert|tagged> <count> <prefix>   save <count> notes, one save each; an
//                                                           upsert reports the ID its values are stored under; a
//                                                           tagged note interns a new field name in every save
//   migrate <path>                                          migrate to NotesV2 with NotesPlan
//   stream <path>                                           stream a value in, then wait to be killed

/// Writes one line to standard output at once, unbuffered, so the parent sees it before anything else happens.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The bytes a streamed write pulled so far.
final class Pulled: Sendable {
    let bytes = Atomic<Int>(0)
}

func fail(_ error: any Error) -> Never {
    if let error = error as? KVStoreError {
        report("error \(error.kind) \(error.message)")
    } else {
        report("error other \(error)")
    }
    exit(3)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: SharingHelper <command> <path> [arguments]\n".utf8))
    exit(64)
}
let path = arguments[2]

do {
    switch arguments[1] {
    case "write":
        let (schema, count, prefix) = (arguments[3], Int(arguments[4]) ?? 0, arguments[5])
        let container: ModelContainer
        switch schema {
        case "v1": container = try ModelContainer(for: NotesV1.self, configuration: sharingConfiguration(path))
        case "unique": container = try ModelContainer(for: UniqueNote.self, configuration: sharingConfiguration(path))
        case "upsert": container = try ModelContainer(for: UpsertNote.self, configuration: sharingConfiguration(path))
        case "tagged": container = try ModelContainer(for: TaggedNote.self, configuration: sharingConfiguration(path))
        case "removing":
            container = try ModelContainer(for: TitleRemovingNote.self, configuration: sharingConfiguration(path))
        default: container = try ModelContainer(for: PlainNote.self, configuration: sharingConfiguration(path))
        }
        report("ready")
        let delay = ProcessInfo.processInfo.environment["SHARING_WRITE_DELAY_US"].flatMap { UInt32($0) } ?? 0
        // A long body makes every commit grow the data file.
        let body = ProcessInfo.processInfo.environment["SHARING_BODY_BYTES"].flatMap { Int($0) }.map {
            String(repeating: "x", count: $0)
        }
        for index in 0..<count {
            let id = UUID.timeOrdered()
            let title = "\(prefix) \(index % 50)"
            do {
                let stored = try container.write { txn in
                    switch schema {
                    case "v1": try txn.insert(NotesV1.Note(id: id, title: title, body: body ?? "one two three"))
                    case "unique": try txn.insert(UniqueNote(id: id, title: title, body: "unique"))
                    case "removing": try txn.insert(TitleRemovingNote(id: id, title: title, body: "removing"))
                    case "upsert": try txn.insert(UpsertNote(id: id, title: title, body: "\(prefix) \(index)"))
                    case "tagged": try txn.insert(TaggedNote(id: id, title: title, tags: ["\(prefix)-\(index)": index]))
                    default: try txn.insert(PlainNote(id: id, title: title, body: "plain"))
                    }
                }
                report("saved \(stored)")
            } catch KVStoreError.uniqueViolation {
                report("rejected \(title)")
            }
            if delay > 0 { usleep(delay) }
        }
    case "migrate":
        report("ready")
        let container = try ModelContainer(
            for: NotesV2.self, migrationPlan: NotesPlan.self, configuration: sharingConfiguration(path))
        report("migrated")
        try container.close()
    case "stream":
        let container = try ModelContainer(for: Attachment.self, configuration: sharingConfiguration(path))
        let attachment = Attachment(name: "big")
        try container.write { txn in try txn.insert(attachment) }
        report("ready")
        let chunk = Data(repeating: 0xAB, count: 1 << 20)
        let source = AsyncStream<Data> { continuation in
            // 40 MiB: more than two batches, then the source stalls until the parent kills the process.
            for _ in 0..<40 { continuation.yield(chunk) }
        }
        let pulled = Pulled()
        let task = Task.detached {
            _ = try await container.setData(
                for: \.content, of: attachment,
                from: source.map { bytes -> Data in
                    // A batch is 16 MiB: once more than that was pulled, the first batch committed.
                    let total = pulled.bytes.add(bytes.count, ordering: .relaxed).newValue
                    if total > 17 << 20 && total - bytes.count <= 17 << 20 { report("staged") }
                    return bytes
                })
        }
        _ = task
        while true { sleep(60) }
    default:
        FileHandle.standardError.write(Data("unknown command \(arguments[1])\n".utf8))
        exit(64)
    }
} catch {
    fail(error)
}
