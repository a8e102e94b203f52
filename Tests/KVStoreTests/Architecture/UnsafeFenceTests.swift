import Foundation
import TestSupport
import Testing

/// Where the KVStore module's unsafe code may be, as ARCHITECTURE.md lists it: the module builds in strict memory
/// safety mode, so the compiler makes every unsafe use carry an `unsafe` mark, and this check keeps the marks in the
/// fenced files, each of which documents the invariant its unsafe code relies on.
@Suite struct UnsafeFenceTests {
    /// The fenced files of `Sources/KVStore`, and what each holds.
    static let fencedFiles: [String: String] = [
        "Codec/BorrowedBytes.swift": "views of borrowed bytes: a record in the map, an array for a closure",
        "Codec/ByteAppending.swift": "the encoder's fixed-size appends through a stack buffer",
        "Codec/Checksum.swift": "the CRC-32C C call",
        "Codec/FuzzingEntryPoints.swift": "the fuzz targets' raw-buffer entry points",
        "Codec/KnownTypeCast.swift": "casts of values and functions to their own, checked, type",
        "Codec/RecordEncoding.swift": "the encoder's state without run-time exclusivity checks",
        "Codec/RecordDecoding.swift": "the decoder's state without run-time exclusivity checks",
        "Model/ModelAddress.swift": "model attributes read at their offsets",
        "Model/ModelSink.swift": "models collected in storage of their own, moved into the array once",
        "Model/ObjectContents.swift": "model objects' stored properties: a rollback's exchange, a FieldShadow's copy",
        "Store/Transaction+BorrowedBytes.swift": "LMDB's map lent as views",
        "Store/WriteState.swift": "the write state without run-time exclusivity checks",
        "Store/StoreLock.swift": "the lock's system calls",
        "Container/FileSystemQueries.swift": "stat and statvfs",
        "Context/TransactionHandle.swift": "the LMDB transaction a model transaction holds by address",
        "Concurrency/ModelActor.swift": "the actor's serial executor",
    ]

    /// Whether `line` has a word that makes or marks unsafe code.
    static func isUnsafe(_ line: Substring) -> Bool {
        line.contains(
            #/\bunsafe\b|@exclusivity\(unchecked\)|\bUnsafe[A-Z]\w*|\bunsafe(BitCast|Downcast)\b|\bunsafelyUnwrapped\b|\bwithUnsafe[A-Z]\w*/#
        )
    }

    /// The lines of `code` with unsafe words, as `path:line: text`.
    static func unsafeLines(in code: String, path: String) -> [String] {
        code.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { number, line in
            isUnsafe(line) ? "\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))" : nil
        }
    }

    @Test func unsafeCodeLivesOnlyInTheFencedFiles() throws {
        let outside = try LayerTests.sources().filter { Self.fencedFiles[$0.path] == nil }.flatMap { file in
            Self.unsafeLines(in: file.code, path: file.path)
        }
        #expect(outside.isEmpty, "unsafe code outside the fenced files:\n\(outside.joined(separator: "\n"))")
    }

    @Test func everyFencedFileExistsAndSaysWhatItRelyOn() throws {
        let files = Dictionary(uniqueKeysWithValues: try LayerTests.sources().map { ($0.path, $0) })
        for path in Self.fencedFiles.keys.sorted() {
            let file = try #require(files[path], "\(path) is listed as fenced but does not exist")
            let text = try String(
                contentsOf: packageRoot(of: #filePath).appendingPathComponent("Sources/KVStore/\(path)"),
                encoding: .utf8)
            #expect(text.contains("nvariant"), "\(path) does not state the invariant its unsafe code relies on")
            #expect(!Self.unsafeLines(in: file.code, path: path).isEmpty, "\(path) is fenced but holds no unsafe code")
        }
    }

    @Test func theScannerFindsUnsafeWordsInCodeOnly() {
        let code = LayerTests.codeOnly(
            """
            // unsafeBitCast in a comment
            let a = "UnsafeRawPointer in a string"
            let b = unsafe pointer.pointee
            """)
        #expect(Self.unsafeLines(in: code, path: "X.swift") == ["X.swift:3: let b = unsafe pointer.pointee"])
    }

    @Test func bothModulesBuildInStrictMemorySafetyMode() throws {
        let manifest = try String(
            contentsOf: packageRoot(of: #filePath).appendingPathComponent("Package.swift"), encoding: .utf8)
        // Each target's declaration runs from its `.target(` to the next declaration.
        let declarations = manifest.components(separatedBy: ".target(").dropFirst().map {
            $0.components(separatedBy: "Target(").first ?? $0
        }
        for target in ["LMDB", "KVStore"] {
            let declaration = try #require(
                declarations.first { $0.contains("name: \"\(target)\"") }, "Package.swift declares no \(target) target")
            #expect(
                declaration.contains(".strictMemorySafety()"), "\(target) does not build with .strictMemorySafety()")
        }
    }
}
