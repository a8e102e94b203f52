import CommandLineKit
import Testing

/// The progress line: drawn in place on a terminal only, and erased at the end.
@Suite struct ProgressLineTests {
    /// Collects what a progress line writes.
    final class Written {
        var text = ""
    }

    @Test func drawsAndErasesWhenEnabled() {
        let written = Written()
        let progress = ProgressLine(isEnabled: true) { written.text += $0 }
        progress.update("check: Task 1,000 records")
        #expect(written.text == "\r\u{1B}[Kcheck: Task 1,000 records")
        progress.finish()
        #expect(written.text == "\r\u{1B}[Kcheck: Task 1,000 records\r\u{1B}[K")
        progress.finish()
        #expect(written.text.count == "\r\u{1B}[Kcheck: Task 1,000 records\r\u{1B}[K".count, "erased once")
    }

    @Test func writesNothingWhenDisabled() {
        let written = Written()
        var made = false
        let progress = ProgressLine(isEnabled: false) { written.text += $0 }
        progress.update(
            {
                made = true; return "never shown"
            }())
        progress.finish()
        #expect(written.text == "")
        #expect(!made, "the text is not even made")
    }
}
