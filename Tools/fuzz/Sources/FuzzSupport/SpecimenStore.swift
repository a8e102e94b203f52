import Foundation
import KVStore
import KVToolCore

/// A store of ``Specimen`` records in a temporary directory: the catalog the import target parses lines against, and
/// the source of its seeds through `kvtool export`.
public enum SpecimenStore {
    /// Creates the store with the samples saved in it, runs `body` with its path, then removes the store.
    ///
    /// - Throws: What creating the store or `body` throws.
    public static func with<R>(_ body: (String) throws -> R) throws -> R {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath().path
        let path = base + "/kvstore-fuzz-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let container = try ModelContainer(for: Specimen.self, configuration: ModelConfiguration(path: path))
        let context = ModelContext(container)
        for sample in Specimen.samples { context.insert(sample) }
        try context.save()
        try container.close()
        return try body(path)
    }

    /// The lines `kvtool export` writes for the store at `path`: a header, one line per record, and an end line.
    ///
    /// - Throws: An error with kvtool's messages when the export fails.
    public static func exportedLines(of path: String) throws -> [[UInt8]] {
        let file = path + ".jsonl"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let errors = StringSink()
        let status = KVTool.run(
            arguments: ["export", path, "--output", file], console: Console(output: StringSink(), errors: errors))
        guard status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["kvtool": errors.text]) }
        let text = try Data(contentsOf: URL(fileURLWithPath: file))
        return text.split(separator: UInt8(ascii: "\n")).map { Array($0) }
    }
}
