/// The version of a ``VersionedSchema``: major, minor and patch numbers, ordered as such.
///
/// The catalog records it as text, such as `2.1.0`, and `kvtool info` prints it.
///
/// ```swift
/// SchemaVersion(1, 2, 0) < SchemaVersion(2, 0, 0)   // true
/// SchemaVersion("1.2.0") == SchemaVersion(1, 2, 0)  // true
/// ```
public struct SchemaVersion: Comparable, Hashable, Sendable, Codable, LosslessStringConvertible {
    /// The major number.
    public var major: Int
    /// The minor number.
    public var minor: Int
    /// The patch number.
    public var patch: Int

    /// Creates a version from its numbers.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Parses `major.minor.patch`, such as `2.1.0`; `nil` for anything else.
    public init?(_ description: String) {
        let parts = description.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let major = Int(parts[0]), let minor = Int(parts[1]), let patch = Int(parts[2]),
            major >= 0, minor >= 0, patch >= 0
        else { return nil }
        self.init(major, minor, patch)
    }

    /// `major.minor.patch`.
    public var description: String { "\(major).\(minor).\(patch)" }

    /// Orders by major, then minor, then patch number.
    public static func < (lhs: SchemaVersion, rhs: SchemaVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// Decodes the text form, `major.minor.patch`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a text that is not a version, or what `decoder` throws for a value
    ///   that is not a string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let version = SchemaVersion(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not a schema version (major.minor.patch)")
        }
        self = version
    }

    /// Encodes the text form, `major.minor.patch`.
    ///
    /// - Throws: What `encoder` throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
