/// Returns `value` as `U`, the type it is known to have: a cast that the caller has already decided by comparing
/// `T` with `U`, without the run-time machinery of `as?`.
///
/// The record coders handle a few types (Date, UUID, URL, Decimal, Data) with tags of their own. Their generic code
/// finds such a type with a metadata comparison such as `T.self == Date.self`, and then needs the value as a `Date`:
/// `value as? Date` would cost a dynamic cast, and an Optional, per value. This function is the one place that
/// reinterprets a value instead.
///
/// One of the module's few places with unsafe code (ARCHITECTURE.md lists them). Invariant: it converts a value only
/// to its own type: `unsafeBitCast` from a type to itself changes
/// nothing. The precondition checks that in every build; it compares two metadata pointers, and in code specialized
/// for `T` and `U` (the coders' hot paths, whose callers are inlined) the comparison is folded away.
///
/// ```swift
/// if T.self == Date.self {
///     let date = knownTypeCast(value, to: Date.self)
/// }
/// ```
///
/// - Parameters:
///   - value: A value whose type `T` is `U`.
///   - type: The type `value` has.
/// - Returns: `value`, typed as `U`.
@inline(__always)
func knownTypeCast<T, U>(_ value: T, to type: U.Type) -> U {
    precondition(T.self == U.self, "knownTypeCast(_:to:) converts a value only to its own type")
    return unsafe unsafeBitCast(value, to: U.self)
}

/// Returns `object` as `T`, the class it is known to be an instance of, without the run-time check of `as!`.
///
/// The container finds an entity's store by the model type's `ObjectIdentifier`, and the store registered under
/// `ObjectIdentifier(M.self)` is an `EntityStore<M>`: a checked cast per insert and fetch would cost more than the
/// lookup. Invariant: `object` is a `T`; debug builds check it.
///
/// - Parameters:
///   - object: An instance of `T`.
///   - type: The class `object` is an instance of.
/// - Returns: `object`, typed as `T`.
@inline(__always)
func knownTypeDowncast<T: AnyObject>(_ object: AnyObject, to type: T.Type) -> T {
    assert(object is T, "knownTypeDowncast(_:to:) was given an instance of another class")
    return unsafe unsafeDowncast(object, to: T.self)
}
