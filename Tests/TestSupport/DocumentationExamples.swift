import Foundation

/// The documents whose Swift blocks are examples the tests run: README.md and every article of the DocC catalogs
/// (`Sources/<module>/<module>.docc/*.md`), as paths relative to the package's root.
///
/// - Parameter root: The package's root directory.
/// - Throws: What listing the catalogs' directories throws.
public func documentationFiles(under root: URL) throws -> [String] {
    var files = ["README.md"]
    let manager = FileManager.default
    let sources = root.appendingPathComponent("Sources")
    for module in try manager.contentsOfDirectory(atPath: sources.path).sorted() {
        let catalog = "Sources/\(module)/\(module).docc"
        guard manager.fileExists(atPath: root.appendingPathComponent(catalog).path) else { continue }
        for name in try manager.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path).sorted()
        where name.hasSuffix(".md") {
            files.append("\(catalog)/\(name)")
        }
    }
    return files
}

/// The package's root directory: the nearest directory above `sourcePath` (a file of the package, such as a test's
/// `#filePath`) that holds `Package.swift`.
public func packageRoot(of sourcePath: String) -> URL {
    var directory = URL(fileURLWithPath: sourcePath).deletingLastPathComponent()
    while directory.path != "/" {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            return directory
        }
        directory = directory.deletingLastPathComponent()
    }
    return directory
}

/// The names of the example blocks a document marks, `<!-- example: <name> -->` right before a Swift block, in order.
public func exampleNames(in document: String) -> [String] {
    document.split(separator: "\n").compactMap { line in
        guard line.hasPrefix("<!-- example: "), line.hasSuffix(" -->") else { return nil }
        return String(line.dropFirst("<!-- example: ".count).dropLast(" -->".count))
    }
}

/// How the documents differ from the tests' code for each named example: the code of an example is the lines of the
/// test file between `// Example: begin <name>` and `// Example: end <name>`, with the block's indent taken off each
/// line, and every document that marks the name (README.md or an article; at least one must) must show exactly it.
///
/// - Parameters:
///   - blocks: Each block's name, as in the documents' `<!-- example: <name> -->` marker, and the indent of its lines
///     in the test file.
///   - sourcePath: The test file that runs the examples.
/// - Returns: One sentence per difference; empty when the documents show the tests' code.
/// - Throws: When a document or the test file cannot be read.
public func documentationDifferences(
    _ blocks: [(name: String, indent: Int)], testedIn sourcePath: String
) throws -> [String] {
    let root = packageRoot(of: sourcePath)
    let documents = try documentationFiles(under: root).map { file in
        (file, try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8))
    }
    let source = try String(contentsOf: URL(fileURLWithPath: sourcePath), encoding: .utf8)
    var differences: [String] = []
    for (name, indent) in blocks {
        let prefix = String(repeating: " ", count: indent)
        guard let begin = source.range(of: "// Example: begin \(name)\n"),
            let finish = source.range(of: prefix + "// Example: end \(name)", range: begin.upperBound..<source.endIndex)
        else {
            differences.append("the test file has no '// Example: begin/end \(name)' at indent \(indent)")
            continue
        }
        let tested = source[begin.upperBound..<finish.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(prefix) ? $0.dropFirst(indent) : $0 }
            .joined(separator: "\n")
        var shownIn = 0
        for (file, text) in documents {
            guard let marker = text.range(of: "<!-- example: \(name) -->\n```swift\n") else { continue }
            shownIn += 1
            guard let end = text.range(of: "```", range: marker.upperBound..<text.endIndex) else {
                differences.append("\(file): the example '\(name)' has no closing fence")
                continue
            }
            if String(text[marker.upperBound..<end.lowerBound]) != tested {
                differences.append("\(file): the example '\(name)' differs from the test's code")
            }
        }
        if shownIn == 0 { differences.append("no document shows the example '\(name)'") }
    }
    return differences
}
