/// A type whose values an option or argument takes, parsed by its ``parser`` unless the declaration gives another.
///
/// `String`, `Int` and `UInt64` conform, and an enumeration of strings conforms with no code at all: its cases are
/// the choices.
///
/// ```swift
/// enum SizeClass: String, CaseIterable, ArgumentValue { case small, standard = "default", large }
/// ```
package protocol ArgumentValue: Sendable {
    /// How the text of an argument becomes a value of the type.
    static var parser: ValueParser<Self> { get }
}

extension String: ArgumentValue {
    /// Any text.
    package static var parser: ValueParser<String> { .string }
}

extension Int: ArgumentValue {
    /// Any integer.
    package static var parser: ValueParser<Int> { .integer }
}

extension UInt64: ArgumentValue {
    /// Any unsigned integer.
    package static var parser: ValueParser<UInt64> { .unsigned }
}

extension ArgumentValue where Self: CaseIterable & RawRepresentable, RawValue == String {
    /// One of the cases, by raw value.
    package static var parser: ValueParser<Self> { .choice }
}
