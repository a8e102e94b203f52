import CommandLineKit

/// The progress line of long work (export, import, check): the kit's, drawn on the console's standard error when
/// that is a terminal.
typealias Progress = ProgressLine

extension ProgressLine {
    /// Creates a progress line on the console's standard error.
    ///
    /// - Parameter console: The console; nothing is drawn unless its standard error is a terminal.
    convenience init(console: Console) {
        let errors = console.errors
        self.init(isEnabled: console.errorsIsTerminal) { errors.write($0) }
    }
}
