/// Lays out help and usage lines the same way in every tool: sections in the manner of swift-argument-parser, two
/// columns for lists, everything wrapped at ``width`` columns.
enum HelpFormatter {
    /// The width help text is wrapped to.
    static let width = 100
    /// Where the help column of a list starts.
    static let helpColumn = 26

    /// `OVERVIEW: <abstract>`, wrapped.
    static func overview(_ abstract: String) -> String {
        wrap("OVERVIEW: " + abstract, width: width, indent: 0) + "\n"
    }

    /// A usage line, `<prefix><path> <parts>`, wrapped between parts with the continuation lines under the first
    /// part: `USAGE: kvtool import <path> [<file>] ...`.
    static func usage(_ prefix: String, path: String, parts: [String]) -> String {
        var line = prefix + path
        let indent = String(repeating: " ", count: min(line.count + 1, 40))
        var lines: [String] = []
        for part in parts {
            if line.count + 1 + part.count > width && line.count > indent.count {
                lines.append(line)
                line = indent + part
            } else {
                line += " " + part
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A titled list, such as `OPTIONS:` with an entry per option.
    static func section(_ title: String, _ entries: [(label: String, help: String)]) -> String {
        "\(title):\n" + entries.map { entry(label: $0.label, help: $0.help) }.joined()
    }

    /// The discussion: one paragraph per line of `text`, each wrapped, with blank lines between.
    static func paragraphs(_ text: String) -> String {
        text.split(separator: "\n").map { wrap(String($0), width: width, indent: 0) }.joined(separator: "\n\n") + "\n"
    }

    /// One entry of a list: the label, then the help wrapped beside it, or below it when the label is too long.
    static func entry(label: String, help: String) -> String {
        let head = "  " + label
        let body = wrap(help, width: width - helpColumn, indent: helpColumn)
        let bodyLines = body.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = bodyLines.first else { return head + "\n" }
        let firstText = first.drop { $0 == " " }
        var text: String
        if head.count + 2 <= helpColumn {
            text = head + String(repeating: " ", count: helpColumn - head.count) + firstText + "\n"
        } else {
            text = head + "\n" + String(repeating: " ", count: helpColumn) + firstText + "\n"
        }
        for line in bodyLines.dropFirst() { text += line + "\n" }
        return text
    }

    /// Wraps each line of `text` to `width` columns at spaces, each output line indented by `indent` spaces and a
    /// line's own leading spaces kept.
    static func wrap(_ text: String, width: Int, indent: Int) -> String {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let leading = paragraph.prefix { $0 == " " }
            var line = ""
            for word in paragraph.split(separator: " ") {
                if !line.isEmpty && line.count + 1 + word.count > width - leading.count {
                    lines.append(margin + leading + line)
                    line = ""
                }
                line += (line.isEmpty ? "" : " ") + word
            }
            lines.append(line.isEmpty ? "" : margin + leading + line)
        }
        return lines.joined(separator: "\n")
    }
}
