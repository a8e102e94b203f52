/// A progress line on standard error for long work, redrawn in place.
///
/// It draws only when enabled (when standard error is a terminal), at most ten times a second, and is erased by
/// ``finish()``, so scripts and logs never see it. What it writes goes through `write`, so a tool keeps its own
/// outputs (a buffered sink, a test's string).
///
/// ```swift
/// let progress = ProgressLine(isEnabled: isatty(STDERR_FILENO) == 1) { FileHandle.standardError.write(Data($0.utf8)) }
/// for iteration in 1...count { progress.update("iteration \(iteration) of \(count)") }
/// progress.finish()
/// ```
package final class ProgressLine {
    private let write: (String) -> Void
    private let isEnabled: Bool
    private let clock = ContinuousClock()
    private var lastDraw: ContinuousClock.Instant?
    private var isShown = false

    /// How often the line may be redrawn.
    private static let interval = Duration.milliseconds(100)

    /// Creates a progress line.
    ///
    /// - Parameters:
    ///   - isEnabled: Whether to draw at all: whether standard error is a terminal.
    ///   - write: Writes text to standard error.
    package init(isEnabled: Bool, write: @escaping (String) -> Void) {
        self.isEnabled = isEnabled
        self.write = write
    }

    /// Redraws the line with `text`, unless it was drawn less than a tenth of a second ago.
    ///
    /// - Parameter text: What to show, such as `check: Task 120,000 records`; made only when it is drawn.
    package func update(_ text: @autoclosure () -> String) {
        guard isEnabled else { return }
        let now = clock.now
        if let lastDraw, now - lastDraw < Self.interval { return }
        lastDraw = now
        // "\r" returns to the start of the line and "ESC [K" erases it, so a shorter text leaves nothing behind.
        write("\r\u{1B}[K" + text())
        isShown = true
    }

    /// Erases the line, if it is shown.
    package func finish() {
        guard isShown else { return }
        write("\r\u{1B}[K")
        isShown = false
    }
}
