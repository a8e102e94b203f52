import Foundation
import TestSupport
import Testing

/// A public function, initializer or subscript that throws, with the `///` comment above it.
struct ThrowingDeclaration: CustomStringConvertible {
    /// The file, relative to the package's root.
    var file: String
    /// The line of the declaration, from 1.
    var line: Int
    /// The declaration's first line, trimmed.
    var signature: String
    /// The lines of its documentation comment.
    var documentation: [String]

    /// Whether the comment has a `- Throws:` line.
    var saysWhatItThrows: Bool {
        documentation.contains { $0.contains("- Throws:") }
    }

    var description: String { "\(file):\(line): \(signature)" }
}

/// Finds the public declarations that throw in Swift source: those marked `public` or `open`, and the requirements of
/// a public protocol.
///
/// It reads source as this package writes it (`swift format`'s layout): a declaration starts a line, attributes may
/// stand on the lines above it, and a body's `{` ends the line that ends the signature. A declaration throws when
/// `throws` or `rethrows` follows its parameter list, so a parameter's throwing closure type does not count.
enum ThrowingDeclarationScanner {
    private static let modifiers: Set<String> = [
        "public", "open", "package", "internal", "private", "fileprivate", "static", "class", "final", "mutating",
        "nonmutating", "convenience", "required", "override", "nonisolated", "dynamic", "consuming", "borrowing",
    ]
    private static let accessModifiers: Set<String> = [
        "public", "open", "package", "internal", "private", "fileprivate",
    ]

    static func declarations(in source: String, file: String) -> [ThrowingDeclaration] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var found: [ThrowingDeclaration] = []
        var documentation: [String] = []
        var depth = 0
        var publicProtocols: [Int] = []
        var inMultilineString = false
        var index = 0
        while index < lines.count {
            let line = lines[index]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            defer { index += 1 }
            if inMultilineString {
                if trimmed.contains("\"\"\"") { inMultilineString = false }
                continue
            }
            if trimmed.hasPrefix("///") {
                documentation.append(trimmed)
                continue
            }
            if let (modifiers, keyword) = declarationStart(trimmed) {
                let inProtocol = publicProtocols.last.map { depth == $0 + 1 } ?? false
                let isPublic =
                    modifiers.contains("public") || modifiers.contains("open")
                    || (inProtocol && modifiers.isDisjoint(with: accessModifiers))
                if isPublic, throwsItself(signature(from: index, in: lines), keyword: keyword) {
                    found.append(
                        ThrowingDeclaration(
                            file: file, line: index + 1, signature: trimmed, documentation: documentation))
                }
            } else if trimmed.hasPrefix("@") {
                // An attribute above a declaration, perhaps over several lines: the comment above it still applies.
                var balance = parenthesisBalance(trimmed)
                while balance > 0, index + 1 < lines.count {
                    index += 1
                    balance += parenthesisBalance(lines[index])
                }
                continue
            }
            documentation = []
            let code = codeOnly(line)
            if code.contains("\"\"\"") { inMultilineString = true }
            if trimmed.hasPrefix("public protocol ") { publicProtocols.append(depth) }
            depth += code.filter { $0 == "{" }.count - code.filter { $0 == "}" }.count
            while let last = publicProtocols.last, depth <= last { publicProtocols.removeLast() }
        }
        return found
    }

    /// The modifiers and keyword of a line that starts a function, initializer or subscript, after its attributes.
    private static func declarationStart(_ line: String) -> (modifiers: Set<String>, keyword: String)? {
        var rest = Substring(line)
        while rest.hasPrefix("@") {
            rest = rest.dropFirst().drop { $0.isLetter || $0.isNumber || $0 == "_" }
            if rest.hasPrefix("(") { rest = skippingParentheses(rest) }
            rest = rest.drop { $0 == " " }
        }
        var found: Set<String> = []
        while true {
            let word = rest.prefix { $0.isLetter }
            guard !word.isEmpty else { return nil }
            rest = rest.dropFirst(word.count)
            if modifiers.contains(String(word)) {
                found.insert(String(word))
                if rest.hasPrefix("(") { rest = skippingParentheses(rest) }
                rest = rest.drop { $0 == " " }
                continue
            }
            let next = rest.first
            switch word {
            case "func" where next == " ": return (found, "func")
            case "init" where next == "(" || next == "<" || next == "?" || next == "!": return (found, "init")
            case "subscript" where next == "(" || next == "<": return (found, "subscript")
            default: return nil
            }
        }
    }

    /// The declaration from `start` up to its body's `{`, or to the end of a requirement that has none.
    private static func signature(from start: Int, in lines: [String]) -> String {
        var text = codeOnly(lines[start])
        var index = start
        while index + 1 < lines.count {
            if parenthesisBalance(text) <= 0 {
                if text.contains("{") { break }
                let next = lines[index + 1].trimmingCharacters(in: .whitespaces)
                let continues = ["throws", "rethrows", "async", "->", "where", ")"].contains { next.hasPrefix($0) }
                if !continues { break }
            }
            index += 1
            text += " " + codeOnly(lines[index])
        }
        return text
    }

    /// Whether `throws` or `rethrows` follows the parameter list of the declaration in `signature`.
    private static func throwsItself(_ signature: String, keyword: String) -> Bool {
        guard let keywordRange = signature.range(of: keyword) else { return false }
        var position = keywordRange.upperBound
        var angles = 0
        while position < signature.endIndex {
            let character = signature[position]
            if character == "<" { angles += 1 }
            if character == ">" { angles -= 1 }
            if character == "(" && angles == 0 { break }
            position = signature.index(after: position)
        }
        guard position < signature.endIndex else { return false }
        let afterParameters = skippingParentheses(signature[position...])
        let effects = afterParameters.prefix { $0 != "{" }
        let clause = effects.components(separatedBy: "->").first ?? ""
        let words = clause.split { !($0.isLetter || $0.isNumber || $0 == "_") }
        return words.contains("throws") || words.contains("rethrows")
    }

    /// `text` after the balanced parentheses it starts with.
    private static func skippingParentheses(_ text: Substring) -> Substring {
        var balance = 0
        var position = text.startIndex
        while position < text.endIndex {
            if text[position] == "(" { balance += 1 }
            if text[position] == ")" { balance -= 1 }
            position = text.index(after: position)
            if balance == 0 { break }
        }
        return text[position...]
    }

    private static func parenthesisBalance(_ text: String) -> Int {
        let code = codeOnly(text)
        return code.filter { $0 == "(" }.count - code.filter { $0 == ")" }.count
    }

    /// The line without its string literals and its `//` comment.
    private static func codeOnly(_ line: String) -> String {
        var code = ""
        var inString = false
        var escaped = false
        var previous: Character?
        for character in line {
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
                continue
            }
            if character == "\"" {
                inString = true
                code.append("\"")
                continue
            }
            if character == "/" && previous == "/" {
                code.removeLast()
                break
            }
            code.append(character)
            previous = character
        }
        return code
    }
}

/// Every public throwing API of KVStore, KVStoreTesting, the binding, replication and the NATS client says what it
/// throws, in a `- Throws:` line.
@Suite struct ThrowsDocumentationTests {
    @Test func everyPublicThrowingAPISaysWhatItThrows() throws {
        let root = packageRoot(of: #filePath)
        var declarations: [ThrowingDeclaration] = []
        for module in ["KVStore", "KVStoreTesting", "LMDB", "KVStoreReplication", "NATS"] {
            let directory = root.appendingPathComponent("Sources/\(module)")
            let files = try #require(FileManager.default.enumerator(atPath: directory.path))
            for case let file as String in files where file.hasSuffix(".swift") {
                let source = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                declarations += ThrowingDeclarationScanner.declarations(
                    in: source, file: "Sources/\(module)/\(file)")
            }
        }
        // The scan finds what it should: throwing entry points of both modules, a protocol requirement among them.
        let signatures = declarations.map(\.signature)
        #expect(signatures.contains { $0.contains("func openTable(") })
        #expect(signatures.contains { $0.contains("func save()") })
        #expect(signatures.contains { $0.contains("func testing(") })
        #expect(signatures.contains { $0.hasPrefix("init(fields: borrowing FieldReader) throws") })
        let silent = declarations.filter { !$0.saysWhatItThrows }
        #expect(silent.isEmpty, "No '- Throws:' line:\n\(silent.map(\.description).joined(separator: "\n"))")
    }

    @Test func theScannerFindsPublicThrowingDeclarationsAndTheirComments() {
        let source = """
            /// A type.
            public struct Sample {
                /// Documented.
                ///
                /// - Throws: What it throws.
                @inlinable
                public func documented() throws(SampleError) -> Int { 1 }

                /// Says nothing about throwing.
                @available(
                    *, deprecated, message: "old"
                )
                public static func silent<T: Collection<UInt8>>(
                    _ value: T,
                    body: (Int) throws -> Void
                ) rethrows {}

                /// Takes a throwing closure but does not throw.
                public func takesClosure(_ body: () throws -> Void) {}

                /// Says nothing.
                public init?(text: String) throws {}

                func internalThrows() throws {}
                private func privateThrows() throws {}
                public var computed: Int { 0 }
                let message = "public func inString() throws {"
            }

            /// A protocol.
            public protocol Requirement {
                /// Says nothing.
                func required() throws
                /// A requirement that does not throw.
                func quiet()
            }

            protocol Internal {
                func hidden() throws
            }
            """
        let found = ThrowingDeclarationScanner.declarations(in: source, file: "Sample.swift")
        #expect(found.map(\.line) == [7, 13, 22, 33])
        #expect(found.map(\.saysWhatItThrows) == [true, false, false, false])
        #expect(found.first?.documentation.first == "/// Documented.")
    }
}
