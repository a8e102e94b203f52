/// The arguments, options and flags of a command, each declared once as a stored property.
///
/// A conforming type is a struct whose `let` properties are ``Flag``, ``Option``, ``Argument`` and ``FlagChoice``
/// values, or groups of them (other `ParsableArguments`, such as the options every command that writes a file
/// takes). The parser finds them by reflection, as swift-argument-parser finds its property wrappers, so a declaration
/// is never listed twice; help lists them, and positional arguments take their words, in the order of the
/// properties. Properties of other types are ignored. The command reads each value back through its declaration with
/// a key path, so a misspelled name does not compile:
///
/// ```swift
/// struct Arguments: ParsableArguments {
///     let path = Argument<String>("path", help: "The store's directory.")
///     let json = Flag.json
/// }
/// init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
///     path = try arguments[\.path]
///     json = arguments[\.json]
/// }
/// ```
package protocol ParsableArguments {
    /// The declarations, with their names, help and defaults.
    init()
}

extension ParsableArguments {
    /// Every declaration, groups flattened, in the order of the properties.
    static var declarations: [Declaration] {
        declarations(in: Self())
    }

    private static func declarations(in value: Any) -> [Declaration] {
        // Mirror lists a struct's stored properties in the order they are declared.
        Mirror(reflecting: value).children.flatMap { child -> [Declaration] in
            if let declared = child.value as? any Declared { return declared.declarations }
            if let group = child.value as? any ParsableArguments { return declarations(in: group) }
            return []
        }
    }
}
