import Foundation

/// Dates as ISO 8601 text in UTC, written so that reading the text back gives the very same `Date`.
///
/// A `Date` is a `Double` of seconds since 2001-01-01. ``exactString(_:)`` writes 0, 3, 6 or 9 fraction digits,
/// the fewest that read back to the same bits, and gives up (returns `nil`) when none do; the parser turns the text
/// into one decimal numeral that `Double` rounds correctly, so no precision is lost on the way.
///
/// ```swift
/// ISO8601.exactString(Date(timeIntervalSinceReferenceDate: 800_000_000))  // "2026-05-07T06:13:20Z"
/// ISO8601.date(from: "2026-05-07")  // midnight UTC
/// ```
package enum ISO8601 {
    /// Seconds from 1970-01-01 to 2001-01-01, the reference date of `Date`.
    private static let referenceOffset: Int64 = 978_307_200
    /// The years the text form covers: four digits.
    private static let years = 1...9999

    /// The text of a date that reads back exactly, with as few fraction digits as that takes, or `nil` when no text
    /// with up to nine fraction digits does (or the year has more than four digits).
    package static func exactString(_ date: Date) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 4e11 else { return nil }
        let whole = interval.rounded(.down)
        if whole == interval { return string(interval, fractionDigits: 0) }
        for digits in [3, 6, 9] {
            // Reading the text back turns "seconds.fraction" into a Double; doing just that here tells whether the
            // text would be exact without writing and parsing it.
            let scale = pow(10, Double(digits))
            var fraction = Int64(((interval - whole) * scale).rounded())
            var seconds = Int64(whole)
            if fraction == Int64(scale) {
                seconds += 1
                fraction = 0
            }
            let back = Self.interval(seconds: seconds, fraction: Array(pad(fraction, digits).utf8))
            if back.bitPattern == interval.bitPattern { return string(interval, fractionDigits: digits) }
        }
        return nil
    }

    /// The text of a date for people: nine fraction digits at most, trailing zeros dropped, whether or not it reads
    /// back exactly; the interval itself when the year is out of range.
    package static func displayString(_ date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        guard var text = string(interval, fractionDigits: 9) else { return interval.description }
        text.removeLast()
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        text += "Z"
        return text
    }

    /// `YYYY-MM-DDTHH:MM:SS[.f…]Z` with `fractionDigits` digits, rounded; `nil` outside years 1 to 9999.
    private static func string(_ interval: Double, fractionDigits: Int) -> String? {
        guard interval.isFinite, abs(interval) < 4e11 else { return nil }
        let whole = interval.rounded(.down)
        let scale = pow(10, Double(fractionDigits))
        var fraction = Int64(((interval - whole) * scale).rounded())
        var seconds = Int64(whole) + referenceOffset
        if fraction == Int64(scale) {
            seconds += 1
            fraction = 0
        }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        guard years.contains(Int(year)) else { return nil }
        var text =
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if fractionDigits > 0 { text += "." + pad(fraction, fractionDigits) }
        return text + "Z"
    }

    /// Parses `YYYY-MM-DD`, or a date and time `YYYY-MM-DDTHH:MM[:SS[.f…]]` with `Z`, `±HH:MM` or `±HHMM` (UTC when
    /// there is no zone), with up to nine fraction digits.
    ///
    /// - Returns: The date, or `nil` when the text is not such a date.
    package static func date(from text: String) -> Date? {
        var scanner = DateScanner(Array(text.utf8))
        guard let year = scanner.number(4), scanner.skip("-"), let month = scanner.number(2), scanner.skip("-"),
            let day = scanner.number(2), (1...12).contains(month), day >= 1
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        guard civil(fromDays: days) == (year, month, day) else { return nil }
        var seconds = days * 86_400 - referenceOffset
        var fraction: [UInt8] = []
        if scanner.skip("T") || scanner.skip(" ") {
            guard let hour = scanner.number(2), scanner.skip(":"), let minute = scanner.number(2), hour < 24,
                minute < 60
            else { return nil }
            seconds += hour * 3600 + minute * 60
            if scanner.skip(":") {
                guard let second = scanner.number(2), second < 60 else { return nil }
                seconds += second
                if scanner.skip(".") || scanner.skip(",") {
                    fraction = scanner.digits()
                    guard (1...9).contains(fraction.count) else { return nil }
                }
            }
            if !scanner.skip("Z") && !scanner.isAtEnd {
                guard let sign = scanner.sign(), let hours = scanner.number(2) else { return nil }
                _ = scanner.skip(":")
                guard let minutes = scanner.number(2), hours < 24, minutes < 60 else { return nil }
                seconds -= sign * (hours * 3600 + minutes * 60)
            }
        }
        guard scanner.isAtEnd else { return nil }
        return Date(timeIntervalSinceReferenceDate: interval(seconds: seconds, fraction: fraction))
    }

    /// `seconds + 0.fraction` as one decimal numeral, which `Double` rounds correctly.
    private static func interval(seconds: Int64, fraction: [UInt8]) -> Double {
        let digits = String(decoding: fraction, as: UTF8.self)
        guard let value = Int64(digits), value > 0 else { return Double(seconds) }
        if seconds >= 0 { return Double("\(seconds).\(digits)") ?? Double(seconds) }
        // -5 + 0.25 is -4.75: the whole part moves one toward zero and the fraction is complemented.
        let complement = Int64(pow(10, Double(digits.count))) - value
        return Double("-\(-seconds - 1).\(pad(complement, digits.count))") ?? Double(seconds)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// Reads the parts of a date's text.
private struct DateScanner {
    let bytes: [UInt8]
    var offset = 0

    /// Creates a scanner at the start of `bytes`.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset == bytes.count }

    /// Reads exactly `count` digits.
    mutating func number(_ count: Int) -> Int64? {
        guard bytes.count - offset >= count else { return nil }
        var value: Int64 = 0
        for byte in bytes[offset..<offset + count] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        offset += count
        return value
    }

    /// Reads as many digits as there are.
    mutating func digits() -> [UInt8] {
        let start = offset
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
        return Array(bytes[start..<offset])
    }

    /// Skips `character` if it comes next.
    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: character) else { return false }
        offset += 1
        return true
    }

    /// Reads `+` as 1 or `-` as -1.
    mutating func sign() -> Int64? {
        if skip("+") { return 1 }
        if skip("-") { return -1 }
        return nil
    }
}
