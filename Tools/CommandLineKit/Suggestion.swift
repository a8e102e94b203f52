/// The name someone probably meant, for "did you mean" in the errors of unknown options and subcommands.
enum Suggestion {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a typo: one edit, or two for a
    /// word of six characters or more (`nope` is not `copy`).
    static func closest(to word: String, among candidates: [String]) -> String? {
        let limit = min(2, max(1, word.count / 3))
        return candidates.map { ($0, distance(word, $0)) }.filter { $0.1 <= limit }.min { $0.1 < $1.1 }?.0
    }

    /// `; did you mean '<prefix><candidate>'?`, or nothing when no candidate is close.
    static func text(for word: String, among candidates: [String], prefix: String = "") -> String {
        closest(to: word, among: candidates).map { "; did you mean '\(prefix)\($0)'?" } ?? ""
    }

    /// The Levenshtein distance: insertions, deletions and substitutions of characters.
    static func distance(_ left: String, _ right: String) -> Int {
        let left = Array(left)
        let right = Array(right)
        var row = Array(0...right.count)
        for (i, leftCharacter) in left.enumerated() {
            var next = [i + 1]
            for (j, rightCharacter) in right.enumerated() {
                next.append(min(row[j + 1] + 1, next[j] + 1, row[j] + (leftCharacter == rightCharacter ? 0 : 1)))
            }
            row = next
        }
        return row[right.count]
    }
}
