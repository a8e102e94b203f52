import Foundation

/// The address of a model lent for the length of a call, and the readers of its stored attributes by offset.
///
/// Every save computes its model's index keys, and applying a key path goes through the runtime's key path
/// interpreter. A key path to a stored property of the model's own storage has a fixed offset
/// (`MemoryLayout.offset(of:)`), and so has a stored property of a class in its instances (the runtime's field
/// list), so ``reader(of:objectOffset:)`` reads the attribute there directly; any other key path (a computed
/// property, a chain of properties) is applied as usual. The model is passed by address, so that an entity's
/// key functions are all of one type that does not depend on the model's type, which code generic over the model
/// iterates without looking up type metadata.
///
/// One of the module's few places with unsafe code (ARCHITECTURE.md lists them). Its invariants:
///
/// - **Lifetime.** An address is valid only inside the ``withAddress(of:_:)`` call that lends it, which is the only
///   way to make one; readers are called with it there and nowhere else.
/// - **Type.** A reader of `M`'s attributes reads an address of an `M`. Every address records the type of its model
///   and every read checks it with a debug assertion; an attribute read at its offset has the attribute's type there,
///   as `MemoryLayout.offset(of:)` guarantees. For a class, the address holds the reference, and an attribute is read
///   at the offset in the instance that the runtime's field list gives for the stored property the key path names,
///   only when the listed type is the attribute's; a relationship property's state is read at the offset the field
///   list gives for its wrapper (``RelationshipProperty/offset``), laid out as the wrapper's one stored property, a
///   ``RelationshipStorage``.
/// - **Lifetime of instances.** The variable at the address holds the class instance for the length of the call.
///
/// ``valueReader(of:)`` makes no address: it reads a struct's attribute at its `MemoryLayout.offset(of:)` inside the
/// `withUnsafePointer(to:)` call that lends the model's own address, where the same **Type** reasoning holds.
@safe
struct ModelAddress {
    /// The model's address.
    fileprivate let pointer: UnsafeRawPointer
    /// The type of the model at ``pointer``.
    fileprivate let type: ObjectIdentifier

    /// The readers' half of the type check: the model at this address is an `M`.
    @inline(__always)
    fileprivate func assumingModel<M>(_: M.Type) -> UnsafePointer<M> {
        assert(type == ObjectIdentifier(M.self), "a reader of \(M.self) was given another model's address")
        return unsafe pointer.assumingMemoryBound(to: M.self)
    }

    /// A function that reads the attribute at `keyPath` of the model at an address: at its offset when it is stored
    /// in the model's own storage, or in the instance of a class at `objectOffset`; through the key path otherwise.
    ///
    /// - Parameter objectOffset: For a class, the offset in its instances of the stored property `keyPath` names,
    ///   which must have type `V` (``ObjectContents/offset(ofAttribute:ofType:in:)`` gives it).
    static func reader<M, V>(
        of keyPath: KeyPath<M, V> & Sendable, objectOffset: Int? = nil
    ) -> @Sendable (ModelAddress) -> V {
        if let objectOffset, M.self is AnyClass {
            return { address in
                // The address holds the class reference, which holds the instance alive for the call.
                let instance = unsafe UnsafeRawPointer(address.assumingModel(M.self)).load(as: UnsafeRawPointer.self)
                return unsafe instance.advanced(by: objectOffset).assumingMemoryBound(to: V.self).pointee
            }
        }
        guard let offset = MemoryLayout<M>.offset(of: keyPath) else {
            return { address in unsafe address.assumingModel(M.self).pointee[keyPath: keyPath] }
        }
        return { address in
            let model = unsafe address.assumingModel(M.self)
            return unsafe UnsafeRawPointer(model).advanced(by: offset).assumingMemoryBound(to: V.self).pointee
        }
    }
}

extension ModelAddress {
    /// A function that reads an attribute of the model at an address through `read`, for attributes that no key path
    /// names (the ID a relationship property of a ``PersistentModel`` holds).
    static func reader<M, V>(_ read: @escaping @Sendable (M) -> V) -> @Sendable (ModelAddress) -> V {
        { address in read(unsafe address.assumingModel(M.self).pointee) }
    }
}

extension ModelAddress {
    /// A function that reads the attribute at `keyPath` of a model passed by value: at its offset when the key path
    /// names a stored property of the model's own storage (a struct's), through the key path otherwise.
    static func valueReader<M, V>(of keyPath: KeyPath<M, V>) -> (M) -> V {
        guard let offset = MemoryLayout<M>.offset(of: keyPath) else { return { $0[keyPath: keyPath] } }
        return { model in
            unsafe withUnsafePointer(to: model) { pointer in
                unsafe UnsafeRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: V.self).pointee
            }
        }
    }
}

extension ModelAddress {
    /// A function that reads, at an address of an instance of the class `M`, the first ID of the relationship
    /// property stored at `stateOffset` in the instance (a to-one's ID): read in place without retaining its state or
    /// making an array, from its state or, when it has none, the ID its storage holds; `nil` when it relates to
    /// nothing.
    ///
    /// The property's storage is a ``RelationshipStorage`` (see ``ObjectContents/relatedObjects(in:at:)``), which the
    /// instance holds for the length of the call.
    static func firstRelatedID<M>(of _: M.Type, stateOffset: Int) -> @Sendable (ModelAddress) -> UUID? {
        { address in
            let instance = unsafe UnsafeRawPointer(address.assumingModel(M.self)).load(as: UnsafeRawPointer.self)
            return unsafe ObjectContents.firstRelatedID(at: stateOffset, in: instance)
        }
    }
}

/// Lends the address of `model` to `body`, which must not keep it.
@inline(__always)
func withAddress<M, R>(of model: M, _ body: (ModelAddress) throws -> R) rethrows -> R {
    try unsafe withUnsafePointer(to: model) { pointer in
        try body(unsafe ModelAddress(pointer: UnsafeRawPointer(pointer), type: ObjectIdentifier(M.self)))
    }
}
