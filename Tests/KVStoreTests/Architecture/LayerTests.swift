import Foundation
import TestSupport
import Testing

/// The layers of the KVStore module, bottom first, as ARCHITECTURE.md draws them: a file may name the types of its
/// own folder and of the layers below, never those of a layer above or of another folder of its own layer.
///
/// A type is a top-level declaration (`struct`, `class`, `enum`, `protocol`, `actor`, `typealias` at the start of a
/// line); a reference is the type's name as a word of the file, outside comments and string literals. Nested types
/// are reached through their parent, so their names are not counted. Functions count too, since an extension in a
/// higher folder can add a method that a lower file calls: a call `name(` is a reference up when every function of
/// that name, in KVStore and in the LMDB binding below it, is declared in a higher layer (or another folder of the
/// caller's layer), but for the few names the standard library also uses (``standardNames``).
@Suite struct LayerTests {
    /// Each folder of `Sources/KVStore` and its layer; `.` is the module's root folder.
    static let layers: [String: Int] = [
        ".": 0,  // KVStoreError
        "Codec": 1,
        "Model": 2,
        "Query": 3,
        "Store": 4,
        "Container": 5,
        "Context": 6,
        "Concurrency": 7, "External": 7, "Migration": 7, "Observation": 7,
    ]

    /// Names of methods of the standard library and Foundation (`Set.insert`, `String.split`), and of enum cases and
    /// closure parameters, that a higher folder also declares as functions: a call of one is not a reference up.
    static let standardNames: Set<String> = ["build", "data", "insert", "pending", "split", "update"]

    /// A source file: its folder and its text without comments and string literals.
    struct SourceFile {
        var path: String
        var folder: String
        var code: String
    }

    /// Every Swift file of `Sources/KVStore`, or of another module's folder.
    static func sources(module: String = "KVStore") throws -> [SourceFile] {
        let root = packageRoot(of: #filePath).appendingPathComponent("Sources/\(module)")
        let paths = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return try paths.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            let components = path.split(separator: "/")
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            return SourceFile(
                path: path, folder: components.count > 1 ? String(components[0]) : ".", code: codeOnly(text))
        }
    }

    /// `text` without comments, string literals (multi-line ones included) and character contents.
    static func codeOnly(_ text: String) -> String {
        var result = ""
        var characters = Array(text)[...]
        while let first = characters.first {
            if characters.starts(with: "//") {
                while let next = characters.first, next != "\n" { characters.removeFirst() }
            } else if characters.starts(with: "/*") {
                characters.removeFirst(2)
                while !characters.isEmpty, !characters.starts(with: "*/") { characters.removeFirst() }
                characters.removeFirst(min(2, characters.count))
            } else if characters.starts(with: "\"\"\"") {
                characters.removeFirst(3)
                while !characters.isEmpty, !characters.starts(with: "\"\"\"") { characters.removeFirst() }
                characters.removeFirst(min(3, characters.count))
                result += "\"\""
            } else if first == "\"" {
                characters.removeFirst()
                while let next = characters.first, next != "\"", next != "\n" {
                    characters.removeFirst()
                    if next == "\\", !characters.isEmpty { characters.removeFirst() }
                }
                if !characters.isEmpty { characters.removeFirst() }
                result += "\"\""
            } else {
                result.append(first)
                characters.removeFirst()
            }
        }
        return result
    }

    /// The names of the top-level types `code` declares.
    static func declaredTypes(in code: String) -> [String] {
        let modifiers: Set<Substring> = [
            "public", "internal", "package", "private", "fileprivate", "final", "indirect", "nonisolated",
        ]
        let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "actor", "typealias"]
        return code.split(separator: "\n").compactMap { line in
            guard let first = line.first, first.isLetter || first == "@" else { return nil }
            var words = line.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "@") })[...]
            while let word = words.first, modifiers.contains(word) || word.hasPrefix("@") { words.removeFirst() }
            guard let kind = words.first, kinds.contains(kind), words.count > 1 else { return nil }
            return String(words[words.startIndex + 1])
        }
    }

    /// The names of the functions `code` declares, at any depth.
    static func declaredFunctions(in code: String) -> Set<String> {
        let words = code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
        return Set(zip(words, words.dropFirst()).filter { $0.0 == "func" }.map { String($0.1) })
    }

    /// The names `code` calls: a lowercase word right before `(`.
    static func calledNames(in code: String) -> Set<String> {
        var names: Set<String> = []
        var word = ""
        for character in code {
            if character.isLetter || character.isNumber || character == "_" {
                word.append(character)
                continue
            }
            if character == "(", let first = word.first, first.isLowercase || first == "_" { names.insert(word) }
            word = ""
        }
        return names
    }

    /// The capitalized words of `code`: the candidates for type names.
    static func typeWords(in code: String) -> Set<Substring> {
        Set(
            code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
                .filter { $0.first?.isUppercase == true })
    }

    /// Each reference that points up or sideways, as `file -> Type (folder)` or `file -> function() (folders)`.
    ///
    /// - Parameter below: Files of the modules under KVStore: their functions are at the bottom.
    static func violations(in files: [SourceFile], below: [SourceFile] = []) -> [String] {
        var owner: [String: String] = [:]
        var functionFolders: [String: Set<String>] = [:]
        for file in files {
            for name in declaredTypes(in: file.code) { owner[name] = file.folder }
            for name in declaredFunctions(in: file.code) { functionFolders[name, default: []].insert(file.folder) }
        }
        for file in below {
            for name in declaredFunctions(in: file.code) { functionFolders[name, default: []].insert("") }
        }
        func layer(of folder: String) -> Int { folder.isEmpty ? -1 : layers[folder] ?? Int.max }
        func isAbove(_ folder: String, _ file: SourceFile) -> Bool {
            folder != file.folder && layer(of: folder) >= layer(of: file.folder)
        }
        var found: [String] = []
        for file in files {
            for word in typeWords(in: file.code).sorted() {
                if let folder = owner[String(word)], isAbove(folder, file) {
                    found.append("\(file.path) -> \(word) (\(folder))")
                }
            }
            for name in calledNames(in: file.code).subtracting(standardNames).sorted() {
                if let folders = functionFolders[name], folders.allSatisfy({ isAbove($0, file) }) {
                    found.append("\(file.path) -> \(name)() (\(folders.sorted().joined(separator: ", ")))")
                }
            }
        }
        return found
    }

    @Test func everyFolderHasALayer() throws {
        let folders = Set(try Self.sources().map(\.folder))
        #expect(folders.subtracting(Self.layers.keys).isEmpty)
    }

    @Test func noFileNamesATypeOfAHigherLayerOrOfAnotherFolderOfItsLayer() throws {
        for violation in Self.violations(in: try Self.sources(), below: try Self.sources(module: "LMDB")) {
            Issue.record("a reference up or sideways: \(violation)")
        }
    }

    @Test func theScannerFindsAReferenceUpward() {
        let files = [
            SourceFile(path: "Codec/A.swift", folder: "Codec", code: Self.codeOnly("struct A { var b: B? }")),
            SourceFile(
                path: "Store/B.swift", folder: "Store",
                code: Self.codeOnly("public final class B {\n  struct Nested {}\n  // A\n  let s = \"A\"\n}")),
        ]
        #expect(Self.violations(in: files) == ["Codec/A.swift -> B (Store)"])
        #expect(Self.declaredTypes(in: files[1].code) == ["B"])
    }

    @Test func theScannerFindsACallOfAMethodAHigherFolderAdds() {
        let files = [
            SourceFile(path: "Store/S.swift", folder: "Store", code: Self.codeOnly("struct S { func f() { g() } }")),
            SourceFile(path: "External/S+G.swift", folder: "External", code: "extension S { func g() {} }"),
            SourceFile(path: "Model/M.swift", folder: "Model", code: "struct M { func h() { f(); g() } }"),
        ]
        #expect(
            Self.violations(in: files) == [
                "Store/S.swift -> g() (External)", "Model/M.swift -> f() (Store)", "Model/M.swift -> g() (External)",
            ])
    }
}
