/// Models collected in storage of their own: those a fetch appends from the closures that visit them, or models put
/// in a new order (``Swift/Array/sortByID()``).
///
/// Generic code that appends to an `[M]` pays for the array's unspecialized code at every model: the runtime's
/// lookup of the metadata of `Array<M>` and the standard library's generic growth check, several hundred
/// instructions, more than decoding a small model's fields. A sink's members find `M` in the object's own metadata
/// and move each model into place through `M`'s value witness; the array is made once, at the end.
///
/// One of the module's few places with unsafe code (ARCHITECTURE.md lists them). Invariant: `storage` holds
/// `capacity` slots, of which the first `count` are initialized and the rest are not; every member keeps it, and a
/// sink is used by one fetch or sort, on one thread.
@safe final class ModelSink<Model> {
    /// The slots; `nil` before the first model.
    private var storage: UnsafeMutablePointer<Model>?
    /// How many slots `storage` holds.
    private var capacity = 0
    /// How many slots, from the first, hold a model.
    private var count = 0

    /// An empty sink.
    init() {}

    deinit {
        removeAll()
    }

    /// Appends `model` and returns how many models were collected. Never inlined, nor are the other members: inlined
    /// into the generic caller, they would ask the runtime for the sink's metadata to find its stored properties.
    @inline(never)
    @discardableResult
    func append(_ model: consuming Model) -> Int {
        if count == capacity { grow() }
        unsafe storage.unsafelyUnwrapped.advanced(by: count).initialize(to: model)
        count += 1
        return count
    }

    /// Removes every model collected.
    @inline(never)
    func removeAll() {
        if let storage = unsafe storage {
            unsafe storage.deinitialize(count: count)
            unsafe storage.deallocate()
        }
        unsafe storage = nil
        (capacity, count) = (0, 0)
    }

    /// The models collected, moved into an array, leaving the sink empty.
    @inline(never)
    func take() -> [Model] {
        guard let storage = unsafe storage else { return [] }
        let models = unsafe [Model](unsafeUninitializedCapacity: count) { buffer, initialized in
            unsafe buffer.baseAddress.unsafelyUnwrapped.moveInitialize(from: storage, count: count)
            initialized = count
        }
        unsafe storage.deallocate()
        unsafe self.storage = nil
        (capacity, count) = (0, 0)
        return models
    }

    /// Doubles the slots (16 at first), the models moved into the new ones.
    private func grow() {
        let larger = Swift.max(16, capacity * 2)
        let slots = UnsafeMutablePointer<Model>.allocate(capacity: larger)
        if let storage = unsafe storage {
            unsafe slots.moveInitialize(from: storage, count: count)
            unsafe storage.deallocate()
        }
        unsafe storage = slots
        capacity = larger
    }
}
