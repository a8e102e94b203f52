/// Rows of text in aligned columns, for people: a header, a rule, then the rows.
///
/// ```swift
/// var table = TextTable(headers: ["Table", "Entries"], rightAligned: [1])
/// table.append(["catalog", "3"])
/// print(table.rendered(), terminator: "")
/// ```
struct TextTable {
    /// The column titles.
    let headers: [String]
    /// The columns whose cells line up on the right, such as counts.
    let rightAligned: Set<Int>
    /// The widest a cell may be; longer ones are cut and end with `…`.
    let maximumWidth: Int
    /// The rows added so far.
    private(set) var rows: [[String]] = []

    /// Creates an empty table.
    init(headers: [String], rightAligned: Set<Int> = [], maximumWidth: Int = 40) {
        self.headers = headers
        self.rightAligned = rightAligned
        self.maximumWidth = maximumWidth
    }

    /// Adds a row; missing cells are empty.
    mutating func append(_ row: [String]) {
        rows.append(row)
    }

    /// The table as lines of text, each ending with a newline.
    func rendered() -> String {
        let cells = ([headers] + rows).map { row in
            headers.indices.map { column in
                fit(column < row.count ? row[column] : "")
            }
        }
        var widths = headers.map { _ in 0 }
        for row in cells {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        var lines: [String] = []
        for (offset, row) in cells.enumerated() {
            lines.append(line(row, widths: widths))
            if offset == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        return lines.map { $0 + "\n" }.joined()
    }

    private func line(_ row: [String], widths: [Int]) -> String {
        var parts: [String] = []
        for (column, cell) in row.enumerated() {
            let padding = String(repeating: " ", count: widths[column] - cell.count)
            parts.append(rightAligned.contains(column) ? padding + cell : cell + padding)
        }
        var text = parts.joined(separator: "  ")
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }

    /// The cell on one line, cut to the maximum width.
    private func fit(_ cell: String) -> String {
        let flat = String(cell.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        guard flat.count > maximumWidth else { return flat }
        return String(flat.prefix(maximumWidth - 1)) + "…"
    }
}
