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
