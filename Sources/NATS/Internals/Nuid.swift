/// Random tokens for inbox subjects: 22 characters of base 62, about 131 bits, so that two clients' inboxes never
/// meet.
enum Nuid {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// A new random token.
    static func next() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<22).map { _ in alphabet[Int(generator.next(upperBound: UInt8(alphabet.count)))] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A new inbox subject, `_INBOX.<token>`.
    static func inbox() -> String {
        "_INBOX." + next()
    }
}

/// Subject checks before anything is sent, so that a mistake is a typed error at the call rather than an `-ERR`
/// later.
enum SubjectCheck {
    /// Checks that `subject` is non-empty, without white space or empty tokens; wildcards (`*`, `>`) only where
    /// `allowsWildcards`, and `>` only as the last token.
    ///
    /// - Throws: ``NATSError/invalidSubject(_:reason:)``.
    static func check(_ subject: String, allowsWildcards: Bool) throws {
        if subject.isEmpty { throw NATSError.invalidSubject(subject, reason: "a subject must not be empty") }
        if subject.utf8.contains(where: { $0 <= 32 || $0 == 127 }) {
            throw NATSError.invalidSubject(subject, reason: "a subject must not hold white space or control characters")
        }
        let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        if tokens.contains(where: \.isEmpty) {
            throw NATSError.invalidSubject(
                subject, reason: "a subject must not have an empty token ('a..b', '.a', 'a.')")
        }
        for (index, token) in tokens.enumerated() where token == "*" || token == ">" {
            if !allowsWildcards {
                throw NATSError.invalidSubject(subject, reason: "wildcards are for subscriptions, not for publishing")
            }
            if token == ">" && index != tokens.count - 1 {
                throw NATSError.invalidSubject(subject, reason: "'>' must be the last token")
            }
        }
    }
}
