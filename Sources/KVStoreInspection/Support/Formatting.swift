/// Formats numbers for people: grouped digits and binary byte sizes.
package enum Formatting {
    /// `1234567` as `1,234,567`, for any integer type (a count read from a damaged file may need 64 unsigned bits).
    package static func grouped(_ value: some BinaryInteger) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// A size in bytes with a binary unit and one decimal, such as `64.0 MiB`; below 1 KiB, `512 bytes`.
    package static func byteSize(_ bytes: Int) -> String {
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
    package static func count(_ value: Int, _ noun: String, plural: String? = nil) -> String {
        "\(grouped(value)) \(value == 1 ? noun : plural ?? noun + "s")"
    }
}
