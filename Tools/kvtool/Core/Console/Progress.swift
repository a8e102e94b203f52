/// A progress line on standard error for long work (export, import, check), redrawn in place.
///
/// It is drawn only when standard error is a terminal, at most ten times a second, and erased when the work ends, so
/// that scripts and logs never see it.
final class Progress {
    private let errors: any TextSink
    private let isEnabled: Bool
    private let clock = ContinuousClock()
    private var lastDraw: ContinuousClock.Instant?
    private var isShown = false

    /// How often the line may be redrawn.
    private static let interval = Duration.milliseconds(100)

    /// Creates a progress line on the console's standard error.
    ///
    /// - Parameter console: The console; nothing is drawn unless its standard error is a terminal.
    init(console: Console) {
        errors = console.errors
        isEnabled = console.errorsIsTerminal
    }

    /// Redraws the line with `text`, unless it was drawn less than a tenth of a second ago.
    ///
    /// - Parameter text: What to show, such as `check: Task 120,000 records`.
    func update(_ text: @autoclosure () -> String) {
        guard isEnabled else { return }
        let now = clock.now
        if let lastDraw, now - lastDraw < Self.interval { return }
        lastDraw = now
        // "\r" returns to the start of the line and "ESC [K" erases it, so a shorter text leaves nothing behind.
        errors.write("\r\u{1B}[K" + text())
        isShown = true
    }

    /// Erases the line.
    func finish() {
        guard isShown else { return }
        errors.write("\r\u{1B}[K")
        isShown = false
    }
}

/// Formats numbers for people: grouped digits and binary byte sizes.
enum Formatting {
    /// `1234567` as `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// A size in bytes with a binary unit and one decimal, such as `64.0 MiB`; below 1 KiB, `512 bytes`.
    static func byteSize(_ bytes: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB"]
        guard bytes >= 1024 else { return "\(bytes) bytes" }
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    /// A count and a noun, with the noun in the plural unless the count is one: `1 record`, `3 records`.
    static func count(_ value: Int, _ noun: String, plural: String? = nil) -> String {
        "\(grouped(value)) \(value == 1 ? noun : plural ?? noun + "s")"
    }
}
