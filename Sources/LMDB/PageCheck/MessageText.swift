// How problems show numbers, keys and labels.

/// `0x`-prefixed hexadecimal, as messages show flags and magic numbers.
func hex<Value: BinaryInteger>(_ value: Value) -> String {
    "0x" + String(value, radix: 16)
}

/// A key for messages: printable ASCII in quotes, anything else as hexadecimal, cut after 32 bytes.
func render(_ key: ArraySlice<UInt8>) -> String {
    let shown = key.prefix(32)
    let more = key.count > 32 ? "…" : ""
    if !shown.isEmpty, shown.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x22 }) {
        return "\"" + String(decoding: shown, as: UTF8.self) + more + "\""
    }
    let digits = shown.map { byte in
        let text = String(byte, radix: 16)
        return byte < 16 ? "0" + text : text
    }
    return "0x" + digits.joined() + more
}

extension String {
    /// The string with its first letter capitalized, to start a sentence with a tree's label.
    var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }
}
