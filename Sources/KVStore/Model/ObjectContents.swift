import Foundation
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
/// - **Relationship storage.** A relationship property's storage is read (and its state stored, when it has none) at
///   the offset the runtime's field list gives for its name, only when the listed type there is the wrapper declared
///   (checked when the offset is taken), and every wrapper is a struct of one stored ``RelationshipStorage``, whose
///   fields lie at the offsets `MemoryLayout` gives for them.
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
        return offset(ofAttribute: name, ofType: propertyType, in: type)
    }

    /// The offset in an instance of `type` of its stored attribute `name`, when the runtime lists one of that name
    /// with type `attributeType` exactly; `nil` otherwise (a computed property, a wrapped or lazy one, whose storage
    /// has another name, or another type).
    static func offset(ofAttribute name: String, ofType attributeType: Any.Type, in type: AnyClass) -> Int? {
        var found: Int?
        _ = unsafe _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { fieldName, offset, fieldType, _ in
            guard unsafe String(cString: fieldName) == name else { return true }
            if fieldType == attributeType { found = offset }
            return false
        }
        return found
    }

    /// The storage of the relationship property at `offset` in the instance at `base`, an offset that
    /// ``offset(ofStoredProperty:ofType:in:)`` gave for the instance's class.
    ///
    /// ``ToOne``, ``ToMany`` and ``ManyToMany`` each hold one stored property, their ``RelationshipStorage``, so the
    /// property's storage is laid out as that struct.
    private static func storage(
        at offset: Int, in base: UnsafeMutableRawPointer
    ) -> UnsafeMutablePointer<RelationshipStorage> {
        unsafe base.advanced(by: offset).assumingMemoryBound(to: RelationshipStorage.self)
    }

    /// The state of the relationship property at `offset` in the instance at `base`, read in place without
    /// retaining it; `nil` when the property has none yet.
    private static func unretainedState(at offset: Int, in base: UnsafeMutableRawPointer) -> Unmanaged<RelatedObjects>?
    {
        unsafe base.load(
            fromByteOffset: offset + RelationshipStorage.relatedOffset, as: Unmanaged<RelatedObjects>?.self)
    }

    /// The shared state of the relationship property stored at `offset` in `object`, an offset that
    /// ``offset(ofStoredProperty:ofType:in:)`` gave for the object's class; made and stored there (from the ID and
    /// context link the storage holds) when the property has none yet, as the wrapper's own accessors make it.
    static func relatedObjects<T: AnyObject>(in object: T, at offset: Int) -> RelatedObjects {
        withExtendedLifetime(object) {
            let base = unsafe Unmanaged.passUnretained(object).toOpaque()
            return unsafe storage(at: offset, in: base).pointee.state()
        }
    }

    /// The shared state of the relationship property stored at `offset` in `object` (see
    /// ``relatedObjects(in:at:)``), or `nil` when it has none: reading it made none yet (it may still hold a stored
    /// ID, which ``firstRelatedID(in:at:)`` reads).
    static func existingRelatedObjects<T: AnyObject>(in object: T, at offset: Int) -> RelatedObjects? {
        withExtendedLifetime(object) {
            let base = unsafe Unmanaged.passUnretained(object).toOpaque()
            return unsafe storage(at: offset, in: base).pointee.related
        }
    }

    /// The first ID of the relationship property stored at `offset` in `object` (a to-one's ID), read in place
    /// without making a state or an array; `nil` when it relates to nothing.
    static func firstRelatedID<T: AnyObject>(in object: T, at offset: Int) -> UUID? {
        withExtendedLifetime(object) {
            let base = unsafe Unmanaged.passUnretained(object).toOpaque()
            return unsafe firstRelatedID(at: offset, in: UnsafeRawPointer(base))
        }
    }

    /// ``firstRelatedID(in:at:)`` for the instance at `base`, which the caller holds alive.
    static func firstRelatedID(at offset: Int, in base: UnsafeRawPointer) -> UUID? {
        if let state = unsafe base.load(
            fromByteOffset: offset + RelationshipStorage.relatedOffset, as: Unmanaged<RelatedObjects>?.self)
        {
            return unsafe state._withUnsafeGuaranteedRef { $0.firstID }
        }
        return unsafe base.load(fromByteOffset: offset + RelationshipStorage.storedIDOffset, as: UUID?.self)
    }

    /// Whether the relationship state at one of `offsets` in `object` holds other IDs than its record: read in place
    /// without retaining it, a property without a state (never set) holding its record's.
    static func relatedIDsChanged<T: AnyObject>(in object: T, at offsets: [Int]) -> Bool {
        withExtendedLifetime(object) {
            let base = unsafe Unmanaged.passUnretained(object).toOpaque()
            for offset in offsets {
                guard let state = unsafe unretainedState(at: offset, in: base) else { continue }
                if unsafe state._withUnsafeGuaranteedRef({ $0.idsChanged }) { return true }
            }
            return false
        }
    }

    /// Gives every relationship property of `object`, at `offsets`, the context `link`: in its state when it has
    /// one (read in place without retaining it), in its storage otherwise, from which a state made later takes it. No
    /// state is made: reading thousands of objects allocates none for their relationships.
    static func attach<T: AnyObject>(_ link: LoaderLink, to object: T, at offsets: [Int]) {
        withExtendedLifetime(object) {
            let base = unsafe Unmanaged.passUnretained(object).toOpaque()
            for offset in offsets {
                if let state = unsafe unretainedState(at: offset, in: base) {
                    unsafe state._withUnsafeGuaranteedRef { state in
                        if state.link !== link { state.link = link }
                    }
                    continue
                }
                let held = unsafe base.load(
                    fromByteOffset: offset + RelationshipStorage.linkOffset, as: Unmanaged<LoaderLink>?.self)
                if unsafe held?.toOpaque() != Unmanaged.passUnretained(link).toOpaque() {
                    unsafe storage(at: offset, in: base).pointee.link = link
                }
            }
        }
    }

    /// Notes that the record of `object` holds the IDs of its relationship states at `offsets`, those it has (a
    /// property without one holds its record's ID already).
    static func markRelatedIDsSaved<T: AnyObject>(in object: T, at offsets: [Int]) {
        withExtendedLifetime(object) {
            let base = unsafe Unmanaged.passUnretained(object).toOpaque()
            for offset in offsets {
                guard let state = unsafe unretainedState(at: offset, in: base) else { continue }
                unsafe state._withUnsafeGuaranteedRef { $0.markSaved() }
            }
        }
    }

    /// Whether `type` inherits from another class.
    static func hasSuperclass(_ type: AnyClass) -> Bool {
        _getSuperclass(type) != nil
    }
}

// MARK: - Field shadows

/// Where the stored attributes of a ``PersistentModel`` class lie in its instances, and how to copy them, for
/// ``FieldShadow``: known only for a class whose every attribute has value semantics that a bitwise comparison can
/// trust (see ``ObjectLayout/init(of:)``).
final class ObjectLayout: Sendable {
    /// One stored attribute: its place, and, unless its type is trivial (no references), how to copy, assign and
    /// destroy it.
    struct Field: Sendable {
        let offset: Int
        let size: Int
        let operations: (any FieldOperations.Type)?
    }

    /// The attributes, in offset order; relationship properties are not among them (their state compares by its
    /// saved IDs).
    let fields: [Field]
    /// The attributes whose types hold references (with ``Field/operations``), in offset order.
    let referenceFields: [Field]
    /// The first attribute's offset, where a shadow's bytes start.
    let start: Int
    /// The bytes from ``start`` to the end of the last attribute.
    let byteCount: Int
    /// The byte ranges (offset, count) that a comparison reads: the attributes' bytes, adjacent ones merged, so that
    /// padding between them is never compared.
    let ranges: [(offset: Int, count: Int)]
    /// How far past a shadow's first element its bytes start, when the shadow's allocation is aligned to 16 as
    /// `malloc` aligns it here: see ``FieldShadow/of(_:layout:)``.
    let shadowShift: Int

    /// The layout of `type`, or `nil` when the runtime lists no fields for it, it has no attributes, or one of its
    /// attributes has a type whose changes a bitwise comparison could miss (see ``ValueSemantics``).
    init?(of type: AnyClass) {
        var fields: [Field] = []
        var trusted = true
        // Option 1 is `.classType`, which the runtime needs to list a class's fields.
        let listed = unsafe _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) {
            _, offset, fieldType, _ in
            if fieldType is any RelationshipPropertyWrapper.Type { return true }
            guard ValueSemantics.isTrusted(fieldType) else {
                trusted = false
                return false
            }
            fields.append(Field(of: fieldType, at: offset))
            return true
        }
        fields.sort { $0.offset < $1.offset }
        guard listed, trusted, let first = fields.first, let end = fields.map({ $0.offset + $0.size }).max() else {
            return nil
        }
        var ranges: [(offset: Int, count: Int)] = []
        for field in fields where field.size > 0 {
            if let last = ranges.last, last.offset + last.count == field.offset {
                ranges[ranges.count - 1].count += field.size
            } else {
                ranges.append((field.offset, field.size))
            }
        }
        self.fields = fields
        self.referenceFields = fields.filter { $0.operations != nil }
        self.start = first.offset
        self.byteCount = end - first.offset
        self.ranges = ranges
        self.shadowShift = (first.offset &- FieldShadow.elementsOffset) & 15
    }
}

extension ObjectLayout.Field {
    /// The attribute of type `type` at `offset`.
    init(of type: Any.Type, at offset: Int) {
        func field<V>(_: V.Type) -> Self {
            Self(offset: offset, size: MemoryLayout<V>.size, operations: _isPOD(V.self) ? nil : FieldValue<V>.self)
        }
        self = _openExistential(type, do: field)
    }
}

/// Copying, assigning and destroying a value of one type at raw addresses, for the attributes of a ``FieldShadow``
/// whose types hold references. A field keeps the conforming type (a metatype: no reference to count, no context to
/// retain when a field is read), whose static functions are specialized for the value's type.
protocol FieldOperations: SendableMetatype {
    /// Initializes the uninitialized memory at `destination` with a copy of the value at `source`.
    static func copy(_ source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer)
    /// Replaces the value at `destination` with a copy of the value at `source`.
    static func assign(_ source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer)
    /// Destroys the value at `address`, leaving the memory uninitialized.
    static func destroy(_ address: UnsafeMutableRawPointer)
}

/// The ``FieldOperations`` of values of type `V`.
@safe
enum FieldValue<V>: FieldOperations {
    static func copy(_ source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
        unsafe destination.initializeMemory(as: V.self, to: source.assumingMemoryBound(to: V.self).pointee)
    }

    static func assign(_ source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
        unsafe destination.assumingMemoryBound(to: V.self).pointee = source.assumingMemoryBound(to: V.self).pointee
    }

    static func destroy(_ address: UnsafeMutableRawPointer) {
        unsafe address.assumingMemoryBound(to: V.self).deinitialize(count: 1)
    }
}

/// A copy of an object's stored attributes, taken when the object matched its stored record: the object is unchanged
/// when its attributes' bytes are still the copy's (``matches(_:)``), one comparison of a few dozen bytes instead of
/// an encoding.
///
/// A bitwise comparison is exact for a trivial value. For a value that holds references, the copy holds them too
/// (it is a copy of the value, retained), so a copy-on-write buffer it shares is not uniquely referenced and a change
/// to it copies it first: the changed attribute then holds another reference, and its bytes differ. Equal bytes mean
/// the same value; different bytes in an attribute without references mean a changed value; different bytes in one
/// with references may still be an equal value in other memory (a string built anew), which the encodings tell apart
/// (``compare(_:)`` says `.undecided`). ``ValueSemantics`` decides which types a layout trusts.
///
/// Invariants of its unsafe code (ObjectContents' **Layout** and **Lifetime** hold too): the shadow's bytes are
/// allocated for its layout (its header), with room before them for their shift (``of(_:layout:)`` checks the shift
/// it allocated for against the address it got), and placed at the same address modulo 16 as the attributes in an
/// object (``bytes``), so that each attribute keeps its type's alignment; the attributes of an object of the
/// layout's class are copied there bitwise, those whose types hold references then initialized again over their bytes
/// with their own types' copy operations (a bitwise copy owns nothing, so initializing over it leaks nothing), and
/// destroyed with them when the shadow goes; the bytes between attributes (a relationship property's storage) are
/// copied but never read, compared or destroyed; every read of an object's bytes holds the object alive.
@safe
final class FieldShadow: ManagedBuffer<ObjectLayout, UInt8> {
    /// Where a shadow's elements start in its allocation: after the object header and the layout reference.
    static var elementsOffset: Int { 16 + MemoryLayout<ObjectLayout>.size }

    /// A copy of the attributes of `object`, an instance of the class `layout` describes: one allocation, its bytes
    /// after its header.
    ///
    /// The bytes are allocated byte-aligned and placed by ``bytes``: an allocation aligned to 16, which a buffer of
    /// 16-byte elements would be, costs `posix_memalign` instead of `malloc`, three times the instructions, on every
    /// object a context reads or saves. They need ``ObjectLayout/shadowShift`` bytes before them when `malloc`
    /// aligns the allocation to 16, as it does here; when it did not, the shadow is made again with 15 to spare,
    /// enough for any placement.
    static func of<T: AnyObject>(_ object: T, layout: ObjectLayout) -> FieldShadow {
        var shadow = make(capacity: layout.byteCount + layout.shadowShift, layout: layout)
        if shadow.shift(start: layout.start) != layout.shadowShift {
            shadow = make(capacity: layout.byteCount + 15, layout: layout)
        }
        withExtendedLifetime(object) {
            let source = unsafe Unmanaged.passUnretained(object).toOpaque()
            let bytes = unsafe shadow.bytes(start: layout.start)
            // The attributes' bytes in one copy (with whatever lies between them, which no comparison reads and no
            // destruction touches), then each attribute that holds references copied again as a value over its
            // bytes, which counts its references.
            unsafe bytes.copyMemory(from: source.advanced(by: layout.start), byteCount: layout.byteCount)
            for field in layout.referenceFields {
                let from = unsafe UnsafeRawPointer(source.advanced(by: field.offset))
                unsafe field.operations?.copy(from, to: bytes.advanced(by: field.offset - layout.start))
            }
        }
        return shadow
    }

    /// An uninitialized shadow of `layout` with `capacity` bytes.
    private static func make(capacity: Int, layout: ObjectLayout) -> FieldShadow {
        let buffer = create(minimumCapacity: capacity) { _ in layout }
        // `create` makes an instance of the class it is called on.
        return unsafe unsafeDowncast(buffer, to: FieldShadow.self)
    }

    /// The copied attributes, laid out as in the object from `start`, the layout's: the first address of the
    /// elements at the same place modulo 16 as `start` in an object (whose address is a multiple of 16), so that every
    /// attribute lies at an address its type's alignment (16 at most) divides. The bytes before it (``shift(start:)``,
    /// at most 15) are part of the capacity ``of(_:layout:)`` allocated. The caller passes `start` from the layout it
    /// read: reading the header here would cost a run-time exclusivity check per call.
    private func bytes(start: Int) -> UnsafeMutableRawPointer {
        unsafe withUnsafeMutablePointerToElements { elements in
            unsafe UnsafeMutableRawPointer(elements).advanced(by: (start &- Int(bitPattern: elements)) & 15)
        }
    }

    /// How far past the first element ``bytes(start:)`` lie.
    func shift(start: Int) -> Int {
        unsafe withUnsafeMutablePointerToElements { elements in (start &- Int(bitPattern: elements)) & 15 }
    }

    deinit {
        let layout = header
        let bytes = unsafe bytes(start: layout.start)
        for field in layout.referenceFields {
            unsafe field.operations?.destroy(bytes.advanced(by: field.offset - layout.start))
        }
    }

    /// How an object's attributes compare with a shadow's.
    enum Comparison {
        /// Every attribute holds the bytes it held: the object is unchanged.
        case same
        /// An attribute without references holds other bytes: its value changed.
        case changed
        /// Only attributes with references hold other bytes: each may hold an equal value in other memory (a string
        /// built anew), which only their encodings tell apart.
        case undecided
    }

    /// How the attributes of `object` compare with the shadow's. A caller that saw ``matches(_:)`` return false
    /// passes `mayMatch: false`, which skips that comparison of every attribute's bytes at once.
    func compare<T: AnyObject>(_ object: T, mayMatch: Bool = true) -> Comparison {
        if mayMatch, matches(object) { return .same }
        return withExtendedLifetime(object) {
            let current = unsafe UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
            let layout = header
            let bytes = unsafe self.bytes(start: layout.start)
            var undecided = false
            for field in layout.fields {
                let copied = unsafe UnsafeRawPointer(bytes.advanced(by: field.offset - layout.start))
                guard unsafe memcmp(current.advanced(by: field.offset), copied, field.size) != 0 else { continue }
                if field.operations == nil { return .changed }
                undecided = true
            }
            return undecided ? .undecided : .same
        }
    }

    /// Calls `body` while `object`'s attributes hold the shadow's values, and the shadow the object's: the values
    /// are exchanged bitwise (moved, as ``ObjectContents/exchange(_:_:)`` moves them) and back when `body` returns.
    ///
    /// - Throws: What `body` throws.
    func withShadowValues<T: AnyObject, R>(in object: T, _ body: () throws -> R) rethrows -> R {
        try withExtendedLifetime(object) {
            let current = unsafe Unmanaged.passUnretained(object).toOpaque()
            let layout = header
            let bytes = unsafe self.bytes(start: layout.start)
            func exchange() {
                for range in layout.ranges {
                    let one = unsafe current.advanced(by: range.offset)
                    let other = unsafe bytes.advanced(by: range.offset - layout.start)
                    for index in 0..<range.count {
                        let byte = unsafe one.load(fromByteOffset: index, as: UInt8.self)
                        unsafe one.storeBytes(
                            of: other.load(fromByteOffset: index, as: UInt8.self), toByteOffset: index, as: UInt8.self)
                        unsafe other.storeBytes(of: byte, toByteOffset: index, as: UInt8.self)
                    }
                }
            }
            exchange()
            defer { exchange() }
            return try body()
        }
    }

    /// Whether every attribute of `object` holds the bytes it held when the shadow was taken.
    func matches<T: AnyObject>(_ object: T) -> Bool {
        withExtendedLifetime(object) {
            let current = unsafe UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
            let layout = header
            let bytes = unsafe self.bytes(start: layout.start)
            for range in layout.ranges {
                let copied = unsafe UnsafeRawPointer(bytes.advanced(by: range.offset - layout.start))
                if unsafe memcmp(current.advanced(by: range.offset), copied, range.count) != 0 { return false }
            }
            return true
        }
    }

    /// Takes the values of `object`'s attributes in place of those the shadow holds, which it releases: what
    /// ``of(_:layout:)`` would hold, without a new allocation. For the shadow of an object the store now holds as it is.
    func retake<T: AnyObject>(from object: T) {
        withExtendedLifetime(object) {
            let source = unsafe Unmanaged.passUnretained(object).toOpaque()
            let layout = header
            let bytes = unsafe self.bytes(start: layout.start)
            // As `of(_:layout:)` copies, once the values held are destroyed: a bitwise copy of every byte, then each
            // attribute that holds references copied again as a value over its bytes.
            for field in layout.referenceFields {
                unsafe field.operations?.destroy(bytes.advanced(by: field.offset - layout.start))
            }
            unsafe bytes.copyMemory(from: source.advanced(by: layout.start), byteCount: layout.byteCount)
            for field in layout.referenceFields {
                let from = unsafe UnsafeRawPointer(source.advanced(by: field.offset))
                unsafe field.operations?.copy(from, to: bytes.advanced(by: field.offset - layout.start))
            }
        }
    }

    /// Gives `object`'s attributes the values of the shadow (which keeps its copy).
    func restore<T: AnyObject>(into object: T) {
        withExtendedLifetime(object) {
            let target = unsafe Unmanaged.passUnretained(object).toOpaque()
            let layout = header
            let bytes = unsafe self.bytes(start: layout.start)
            for field in layout.fields {
                let from = unsafe UnsafeRawPointer(bytes.advanced(by: field.offset - layout.start))
                let to = unsafe target.advanced(by: field.offset)
                if let operations = field.operations {
                    unsafe operations.assign(from, to: to)
                } else {
                    unsafe to.copyMemory(from: from, byteCount: field.size)
                }
            }
        }
    }
}

/// Which attribute types a ``FieldShadow`` compares bitwise: those whose every change shows in their bytes while a
/// copy of the value is held.
///
/// That holds for a trivial type (no references: integers, `Bool`, `Double`, `Date`, `UUID`, `Decimal`, an enum
/// without payloads), for the standard library's and Foundation's copy-on-write values (`String`, `Substring`,
/// `Data`, `URL`, and `Array`, `ContiguousArray`, `Set`, `Dictionary` and `Optional` of trusted types), and for a
/// struct whose stored properties all have trusted types. It does not hold for a class reference (the object can
/// change behind it), an existential, a closure, or an enum with payloads (the runtime does not list its cases'
/// types): a model with such an attribute finds its changes by encoding instead.
enum ValueSemantics {
    /// Whether `type`'s changes always show in its bytes while a copy of the value is held.
    static func isTrusted(_ type: Any.Type, depth: Int = 0) -> Bool {
        guard depth < 16 else { return false }
        func isTrivial<V>(_: V.Type) -> Bool { _isPOD(V.self) }
        if _openExistential(type, do: isTrivial) { return true }
        if type is AnyClass || type is AnyObject.Type { return false }
        if type == String.self || type == Substring.self || type == Data.self || type == URL.self { return true }
        if let container = type as? any ValueSemanticsContainer.Type {
            return container.elementTypes.allSatisfy { isTrusted($0, depth: depth + 1) }
        }
        // The runtime lists the fields of a struct only (it crashes on an existential): the metadata's first word is
        // its kind, 0x200 for a struct in the Swift ABI.
        guard unsafe unsafeBitCast(type, to: UnsafeRawPointer.self).load(as: UInt.self) == 0x200 else { return false }
        var fields: [Any.Type] = []
        // Option 0 lists a struct's fields.
        let listed = unsafe _forEachField(of: type, options: _EachFieldOptions(rawValue: 0)) { _, _, fieldType, _ in
            fields.append(fieldType)
            return true
        }
        return listed && fields.allSatisfy { isTrusted($0, depth: depth + 1) }
    }
}

/// A copy-on-write collection of the standard library, whose element types decide whether it is trusted.
protocol ValueSemanticsContainer {
    static var elementTypes: [Any.Type] { get }
}

extension Array: ValueSemanticsContainer { static var elementTypes: [Any.Type] { [Element.self] } }
extension ContiguousArray: ValueSemanticsContainer { static var elementTypes: [Any.Type] { [Element.self] } }
extension Set: ValueSemanticsContainer { static var elementTypes: [Any.Type] { [Element.self] } }
extension Dictionary: ValueSemanticsContainer { static var elementTypes: [Any.Type] { [Key.self, Value.self] } }
extension Optional: ValueSemanticsContainer { static var elementTypes: [Any.Type] { [Wrapped.self] } }
