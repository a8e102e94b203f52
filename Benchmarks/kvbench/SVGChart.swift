import Foundation

/// The report as an SVG chart with up to three panels: (a) each row's ratio to the raw C baseline as a bar from 0 on a
/// linear axis, with the reference line at 1.0 and the performance issue's target, 0.8, dashed, and below it, for the
/// rows measured against SQLite, the ratio to SQLite as a lighter bar (its target: 1.0); (b) the scale series' insert
/// throughput against the store size on a log axis, a line per ID order and side; (c) the class/struct comparison's
/// ratios, classes over structs, drawn as (a) with the reference models' target, 0.7.
struct SVGChart {
    /// The report to draw.
    let report: Report

    private let width = 1_000.0
    private let ratioRowHeight = 24.0
    /// The height of a row of panel (a) with two bars, raw C's and SQLite's.
    private let sqliteRowHeight = 32.0
    private let labelWidth = 320.0
    private let font = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""

    /// Writes the chart to `path`.
    func write(to path: String) throws {
        try Data(svg.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The chart as an SVG document.
    var svg: String {
        let rawResults = report.results.filter { $0.baselineKind == .rawC }
        let showsSQLite = rawResults.contains { $0.sqliteRatio != nil }
        let ratioPanel = ratioBars(
            top: 0, results: rawResults,
            title: showsSQLite
                ? "(a) Throughput ratio to the raw LMDB C API and to SQLite (\(report.settings.subject), \(mode))"
                : "(a) Throughput ratio to the raw LMDB C API (\(report.settings.subject), \(mode))",
            subtitle: showsSQLite
                ? "subject / baseline throughput (right of 1.0: faster); upper bar: raw C, target 0.8 (dashed); "
                    + "lower, lighter bar: SQLite, target 1.0"
                : "subject throughput / baseline throughput; right of 1.0 is faster than raw C (target 0.8, dashed)",
            reference: showsSQLite ? "1.0 = raw C, SQLite" : "1.0 = raw C", target: 0.8, showsSQLite: showsSQLite)
        let scalePanel = scaleLines(top: ratioPanel.height)
        var height = ratioPanel.height + scalePanel.height
        var modelKindBody = ""
        let modelKindResults = report.results.filter { $0.baselineKind == .structModels }
        if !modelKindResults.isEmpty {
            let modelKindPanel = ratioBars(
                top: height, results: modelKindResults,
                title: "(c) Throughput ratio of PersistentModel classes to Model structs (\(mode))",
                subtitle: "class throughput / struct throughput, the same work through a ModelContext; right of 1.0 "
                    + "is faster than structs (target 0.7, dashed)",
                reference: "1.0 = structs", target: 0.7)
            modelKindBody = line(20, height + 5, width - 20, height + 5, stroke: "#ddd") + modelKindPanel.body
            height += modelKindPanel.height
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" \(font) font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            \(ratioPanel.body)\(scalePanel.body)\(modelKindBody)</svg>

            """
    }

    // MARK: - Panels (a) and (c)

    private func ratioBars(
        top: Double, results: [ScenarioResult], title: String, subtitle: String, reference: String, target: Double,
        showsSQLite: Bool = false
    ) -> (body: String, height: Double) {
        let rowHeight = showsSQLite ? sqliteRowHeight : ratioRowHeight
        let plotTop = top + 78
        let plotLeft = labelWidth
        let plotRight = width - (showsSQLite ? 150 : 110)
        let plotBottom = plotTop + Double(max(results.count, 1)) * rowHeight
        var body = text(title, x: 20, y: top + 30, size: 16, weight: "bold")
        body += text(subtitle, x: 20, y: top + 50, fill: "#555")
        let ratios = (results.map(\.ratio) + results.compactMap(\.sqliteRatio)).filter { $0.isFinite }
        // A linear axis from 0 to the next half above the largest ratio, 1.5 at least.
        let high = max(1.5, ((ratios.max() ?? 1) * 2).rounded(.up) / 2)
        func x(_ ratio: Double) -> Double {
            plotLeft + min(max(ratio, 0), high) / high * (plotRight - plotLeft)
        }
        // Grid: a line per quarter, darker and labelled at each half.
        for quarter in 0...Int(high * 4) {
            let value = Double(quarter) / 4
            let isHalf = quarter % 2 == 0
            body += line(x(value), plotTop - 4, x(value), plotBottom, stroke: isHalf ? "#bbb" : "#eee")
            if isHalf { body += text(tick(value), x: x(value), y: plotBottom + 16, anchor: "middle", fill: "#333") }
        }
        body += line(plotLeft, plotBottom, plotRight, plotBottom, stroke: "#333")
        body += text("ratio", x: plotRight + 10, y: plotTop - 10, fill: "#555")
        if results.isEmpty {
            body += text("no results", x: (plotLeft + plotRight) / 2, y: plotTop + 16, anchor: "middle")
        }
        func bar(_ ratio: Double, target: Double, top barTop: Double, height: Double, opacity: Double) -> String {
            let color = ratio >= target ? "#2e8b57" : "#d9822b"
            return """
                <rect x="\(f(x(0)))" y="\(f(barTop))" width="\(f(max(x(ratio) - x(0), 1)))" \
                height="\(f(height))" fill="\(color)" fill-opacity="\(f(opacity))"/>

                """
        }
        for (row, result) in results.enumerated() {
            let center = plotTop + (Double(row) + 0.5) * rowHeight
            body += text(label(result), x: plotLeft - 10, y: center + 4, anchor: "end")
            if showsSQLite {
                body += bar(result.ratio, target: target, top: center - 13, height: 12, opacity: 1)
                body += text(ratioLabel(result.ratio) + " raw C", x: plotRight + 10, y: center - 3, size: 11)
                if let sqliteRatio = result.sqliteRatio {
                    body += bar(sqliteRatio, target: 1, top: center + 1, height: 12, opacity: 0.45)
                    body += text(
                        ratioLabel(sqliteRatio) + " SQLite", x: plotRight + 10, y: center + 11, size: 11, fill: "#555")
                }
            } else {
                body += bar(result.ratio, target: target, top: center - 8, height: 16, opacity: 1)
                body += text(ratioLabel(result.ratio), x: plotRight + 10, y: center + 4)
            }
        }
        body += line(x(1), plotTop - 8, x(1), plotBottom + 4, stroke: "#000", width: 1.5)
        body += text(reference, x: x(1) + 4, y: plotTop - 12, anchor: "start", size: 11)
        body += line(x(target), plotTop - 4, x(target), plotBottom + 4, stroke: "#b22222", width: 1.5, dash: "5,3")
        body += text(
            "target \(tick(target))", x: x(target) - 4, y: plotTop - 12, anchor: "end", size: 11, fill: "#b22222")
        return (body, plotBottom - top + 50)
    }

    private func label(_ result: ScenarioResult) -> String {
        var label = result.label
        if result.baselineKind == .structModels {
            // Panel (c) says the rows are the classes'.
            label = label.replacingOccurrences(of: " (classes)", with: "").replacingOccurrences(
                of: "(classes, ", with: "(")
        }
        return "\(label), N = \(short(Double(result.records)))"
    }

    // MARK: - Panel (b)

    private func scaleLines(top: Double) -> (body: String, height: Double) {
        let height = 400.0
        let plotLeft = 90.0
        let plotRight = width - 290
        let plotTop = top + 70
        let plotBottom = top + height - 60
        var body = line(20, top + 5, width - 20, top + 5, stroke: "#ddd")
        body += text(
            "(b) Insert throughput against store size (scale scenario, \(mode), chunks of "
                + "\(short(Double(report.settings.sizes.chunkSize))) tasks)",
            x: 20, y: top + 35, size: 16, weight: "bold")
        let points = report.results.filter { $0.scenario == ScenarioKind.scale.rawValue }
        guard !points.isEmpty else {
            body += text("The scale scenario was not run.", x: 20, y: top + 65, fill: "#555")
            return (body, 90)
        }
        let sizes = Array(Set(points.map(\.records))).sorted()
        let lowX = log10(Double(sizes.first ?? 1_000)) - 0.3
        let highX = log10(Double(sizes.last ?? 1_000_000)) + 0.3
        let maximum = points.map { max($0.subject.objectsPerSecond, $0.baseline.objectsPerSecond) }.max() ?? 1
        let step = niceStep(maximum / 5)
        let highY = ceil(maximum / step) * step
        func x(_ count: Int) -> Double {
            plotLeft + (log10(Double(count)) - lowX) / (highX - lowX) * (plotRight - plotLeft)
        }
        func y(_ value: Double) -> Double {
            plotBottom - value / highY * (plotBottom - plotTop)
        }
        for value in stride(from: 0, through: highY + step / 2, by: step) {
            body += line(plotLeft, y(value), plotRight, y(value), stroke: value == 0 ? "#333" : "#e5e5e5")
            body += text(short(value), x: plotLeft - 8, y: y(value) + 4, anchor: "end", fill: "#333")
        }
        for size in sizes {
            body += line(x(size), plotTop, x(size), plotBottom, stroke: "#e5e5e5")
            body += text(short(Double(size)), x: x(size), y: plotBottom + 18, anchor: "middle", fill: "#333")
        }
        body += line(plotLeft, plotTop, plotLeft, plotBottom, stroke: "#333")
        body += text(
            "records inserted (log scale)", x: (plotLeft + plotRight) / 2, y: plotBottom + 40, anchor: "middle")
        body += """
            <text x="22" y="\(f((plotTop + plotBottom) / 2))" text-anchor="middle" \
            transform="rotate(-90 22 \(f((plotTop + plotBottom) / 2)))">tasks per second</text>

            """
        let series: [(order: IDOrder, baseline: Bool, color: String, name: String)] = [
            (.timeOrdered, false, "#1f5fa8", "time-ordered (v7), \(report.settings.subject)"),
            (.timeOrdered, true, "#1f5fa8", "time-ordered (v7), \(report.settings.baseline)"),
            (.random, false, "#d9822b", "random (v4), \(report.settings.subject)"),
            (.random, true, "#d9822b", "random (v4), \(report.settings.baseline)"),
        ]
        for (number, item) in series.enumerated() {
            let dash = item.baseline ? " stroke-dasharray=\"7,4\"" : ""
            let coordinates = points.filter { $0.idOrder == item.order }.sorted { $0.records < $1.records }.map {
                (x($0.records), y(item.baseline ? $0.baseline.objectsPerSecond : $0.subject.objectsPerSecond))
            }
            let path = coordinates.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
            body += """
                <polyline points="\(path)" fill="none" stroke="\(item.color)" stroke-width="2.5"\(dash)/>

                """
            for (px, py) in coordinates {
                body += marker(px, py, color: item.color, hollow: item.baseline)
            }
            let legendY = plotTop + 10 + Double(number) * 24
            body += """
                <line x1="\(f(plotRight + 20))" y1="\(f(legendY))" x2="\(f(plotRight + 56))" y2="\(f(legendY))" \
                stroke="\(item.color)" stroke-width="2.5"\(dash)/>

                """
            body += marker(plotRight + 38, legendY, color: item.color, hollow: item.baseline)
            body += text(item.name, x: plotRight + 64, y: legendY + 4, size: 11)
        }
        return (body, height)
    }

    // MARK: - Drawing

    private var mode: String {
        report.settings.durability.rawValue
    }

    private func marker(_ x: Double, _ y: Double, color: String, hollow: Bool) -> String {
        """
        <circle cx="\(f(x))" cy="\(f(y))" r="4" fill="\(hollow ? "white" : color)" stroke="\(color)" \
        stroke-width="2"/>

        """
    }

    private func line(
        _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double,
        stroke: String, width: Double = 1, dash: String? = nil
    ) -> String {
        let dashed = dash.map { " stroke-dasharray=\"\($0)\"" } ?? ""
        return """
            <line x1="\(f(x1))" y1="\(f(y1))" x2="\(f(x2))" y2="\(f(y2))" stroke="\(stroke)" \
            stroke-width="\(f(width))"\(dashed)/>

            """
    }

    private func text(
        _ content: String, x: Double, y: Double, anchor: String = "start", size: Double = 12,
        weight: String = "normal", fill: String = "#000"
    ) -> String {
        """
        <text x="\(f(x))" y="\(f(y))" text-anchor="\(anchor)" font-size="\(f(size))" font-weight="\(weight)" \
        fill="\(fill)">\(escaped(content))</text>

        """
    }

    private func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    private func f(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    private func ratioLabel(_ ratio: Double) -> String {
        (ratio >= 0.1 ? String(format: "%.2f", ratio) : String(format: "%.2g", ratio)) + "×"
    }

    private func tick(_ ratio: Double) -> String {
        String(format: "%g", ratio)
    }

    /// A round step near `rough`: 1, 2, 2.5 or 5 times a power of ten.
    private func niceStep(_ rough: Double) -> Double {
        guard rough > 0 else { return 1 }
        let magnitude = pow(10, floor(log10(rough)))
        return [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? 10 * magnitude
    }

    /// `1500000` as `1.5M`, `10000` as `10k`.
    private func short(_ value: Double) -> String {
        func trimmed(_ number: Double) -> String {
            String(format: "%.1f", number).replacingOccurrences(of: ".0", with: "")
        }
        if value >= 1_000_000 { return trimmed(value / 1_000_000) + "M" }
        if value >= 1_000 { return trimmed(value / 1_000) + "k" }
        return trimmed(value)
    }
}
