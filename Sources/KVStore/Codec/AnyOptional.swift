/// Lets code that sees a value or a type only as `Any` tell an `Optional` and reach what it wraps: the planner's
/// `nil` constants, the index encoder's optional attributes, the messages that print a boxed value.
protocol AnyOptional {
    /// The type the optional wraps.
    static var wrappedType: Any.Type { get }
    /// Whether the value is `nil`.
    var isNil: Bool { get }
    /// The wrapped value, or `nil`.
    var wrappedValue: Any? { get }
    /// `nil` of this type.
    static var none: Self { get }
}

extension Optional: AnyOptional {
    static var wrappedType: Any.Type { Wrapped.self }
    var isNil: Bool { self == nil }
    var wrappedValue: Any? { self.map { $0 as Any } }
}
