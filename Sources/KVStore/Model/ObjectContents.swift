@_spi(Reflection) import Swift

/// The stored properties of ``PersistentModel`` objects as a whole: a rollback gives an object back the values it was
/// fetched with by exchanging its properties with those of an object decoded from its snapshot, which keeps its
/// identity (every reference to it sees the old values again).
///
/// One of the module's few places with unsafe code (ARCHITECTURE.md lists them). Its invariants:
///
/// - **Layout.** Both objects are instances of the same class `T`, which inherits from nothing (the container refuses
///   a model class with a superclass): the runtime's field list of `T` (`_forEachField`) gives every stored property
///   with its offset and type, so the bytes from the first field's offset to the end of the last one hold all of
///   them, and nothing else of the object.
/// - **Ownership.** Exchanging the bytes of two instances moves each property's value, which Swift's values allow
///   (they are bitwise takable: a native weak or unowned reference is a pointer to its referent, not registered by its
///   own address); each value is owned exactly once before and after, so retain counts stay right.
/// - **Lifetime.** Both objects are held alive across the exchange, and no other code runs during it: a context and
///   its objects belong to one actor.
/// - **Relationship storage.** A relationship property's storage is read at the offset the runtime's field list gives
///   for its name, only when the listed type there is the wrapper declared (checked when the offset is taken), and
///   every wrapper is a struct of one stored class reference.
enum ObjectContents {
    /// Exchanges all stored properties of `first` and `second`.
    ///
    /// - Returns: Whether the properties were exchanged: `false` when the runtime lists no fields for `T`.
    static func exchange<T: AnyObject>(_ first: T, _ second: T) -> Bool {
        guard first !== second, let (start, end) = storedRange(of: T.self) else { return false }
        return withExtendedLifetime((first, second)) {
            let one = unsafe Unmanaged.passUnretained(first).toOpaque().advanced(by: start)
            let other = unsafe Unmanaged.passUnretained(second).toOpaque().advanced(by: start)
            let count = end - start
            let scratch = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
            defer { unsafe scratch.deallocate() }
            unsafe scratch.copyMemory(from: one, byteCount: count)
            unsafe one.copyMemory(from: other, byteCount: count)
            unsafe other.copyMemory(from: scratch, byteCount: count)
            return true
        }
    }

    /// The byte range of an instance of `T` that its stored properties occupy, or `nil` when the runtime lists none.
    private static func storedRange(of type: AnyObject.Type) -> (Int, Int)? {
        var start = Int.max
        var end = 0
        func size<V>(of _: V.Type) -> Int { MemoryLayout<V>.size }
        // Option 1 is `.classType`, which the runtime needs to list a class's fields.
        let listed = unsafe _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) {
            _, offset, fieldType, _ in
            start = min(start, offset)
            end = max(end, offset + _openExistential(fieldType, do: size))
            return true
        }
        return listed && start < end ? (start, end) : nil
    }

    /// The names and types of the stored properties of `type`, as the runtime lists them (a property wrapper's
    /// storage is `_<name>`), or `nil` when it lists none.
    static func storedProperties(of type: AnyClass) -> [(name: String, type: Any.Type)]? {
        var properties: [(name: String, type: Any.Type)] = []
        let listed = unsafe _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { name, _, fieldType, _ in
            properties.append((unsafe String(cString: name), fieldType))
            return true
        }
        return listed ? properties : nil
    }

    /// The offset in an instance of `type` of its stored property `name`, when the property has type `propertyType`
    /// and that type is a relationship property's wrapper; `nil` otherwise.
    static func offset(ofStoredProperty name: String, ofType propertyType: Any.Type, in type: AnyClass) -> Int? {
        guard propertyType is any RelationshipPropertyWrapper.Type else { return nil }
        var found: Int?
        _ = unsafe _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { fieldName, offset, fieldType, _ in
            guard unsafe String(cString: fieldName) == name else { return true }
            if fieldType == propertyType { found = offset }
            return false
        }
        return found
    }

    /// The shared state of the relationship property stored at `offset` in `object`, an offset that
    /// ``offset(ofStoredProperty:ofType:in:)`` gave for the object's class.
    ///
    /// ``ToOne``, ``ToMany`` and ``ManyToMany`` each hold one stored property, their ``RelatedObjects`` reference, so
    /// the property's storage is laid out as that reference: reading it there retains it as a copy of the wrapper
    /// would.
    static func relatedObjects(in object: AnyObject, at offset: Int) -> RelatedObjects {
        withExtendedLifetime(object) {
            unsafe Unmanaged.passUnretained(object).toOpaque().advanced(by: offset)
                .assumingMemoryBound(to: RelatedObjects.self).pointee
        }
    }

    /// Whether `type` inherits from another class.
    static func hasSuperclass(_ type: AnyClass) -> Bool {
        _getSuperclass(type) != nil
    }
}
