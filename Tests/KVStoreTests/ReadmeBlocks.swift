import Foundation
import Testing

/// Checks that each named block of README.md shows exactly the code of the test file that calls it: the lines
/// between `// README: begin <name>` and `// README: end <name>`, with the block's indent taken off each line.
///
/// - Parameters:
///   - blocks: Each block's name, as in the README's `<!-- example: <name> -->` marker, and the indent of its lines
///     in the test file.
///   - sourcePath: The calling test file.
func expectReadmeShows(
    _ blocks: [(name: String, indent: Int)],
    testedIn sourcePath: String = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let root = URL(fileURLWithPath: sourcePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let source = try String(contentsOf: URL(fileURLWithPath: sourcePath), encoding: .utf8)
    for (name, indent) in blocks {
        let marker = try #require(
            readme.range(of: "<!-- example: \(name) -->\n```swift\n"), sourceLocation: sourceLocation)
        let end = try #require(
            readme.range(of: "```", range: marker.upperBound..<readme.endIndex), sourceLocation: sourceLocation)
        let shown = String(readme[marker.upperBound..<end.lowerBound])
        let prefix = String(repeating: " ", count: indent)
        let begin = try #require(source.range(of: "// README: begin \(name)\n"), sourceLocation: sourceLocation)
        let finish = try #require(
            source.range(of: prefix + "// README: end \(name)", range: begin.upperBound..<source.endIndex),
            sourceLocation: sourceLocation)
        let tested = source[begin.upperBound..<finish.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(prefix) ? $0.dropFirst(indent) : $0 }
            .joined(separator: "\n")
        #expect(shown == tested, "README block '\(name)' differs from the test", sourceLocation: sourceLocation)
    }
}
