import Foundation
import LMDB

/// Which key paths are a model's `id`, the record key, remembered for each key path met: `#Predicate` makes its key
/// paths on the concrete model type, and a key path made in generic code (`\M.id`, through `Identifiable`) never equals
/// one of those, so the first check of a key path compares its printed form, which costs more than the rest of a
/// plan.
enum RecordKeyPaths {
    private static let known = KeyPathMemo<Bool>()

    /// Whether `keyPath` is the `id` of `Root`.
    static func isID<Root>(_ keyPath: AnyKeyPath, of root: Root.Type) -> Bool {
        guard keyPath is KeyPath<Root, UUID> else { return false }
        return known.value(for: keyPath) { String(describing: $0) == "\\\(Root.self).id" }
    }
}

/// An answer about key paths worked out once per key path object, where working it out costs more than the query
/// that asks (printing the key path, say).
///
/// The key paths are kept with their answers: a key path literal is made once per place in the program, so the table
/// stays small, and since each is held, its object identifier cannot come back for another key path. The table stops
/// growing at ``capacity`` entries (key paths appended at run time each time), and later ones are worked out each
/// time.
final class KeyPathMemo<Value: Sendable>: Sendable {
    /// The most key paths remembered.
    static var capacity: Int { 512 }

    // Key paths are immutable objects; each is held only so that its identifier keeps naming it.
    private let known = Locked<[ObjectIdentifier: (keyPath: AnyKeyPath, value: Value)]>([:])

    /// The answer for `keyPath`: the one remembered, or `answer`'s, remembered while there is room.
    func value(for keyPath: AnyKeyPath, _ answer: (AnyKeyPath) -> Value) -> Value {
        let identifier = ObjectIdentifier(keyPath)
        if let known = known.withLock({ $0[identifier] }) { return known.value }
        let value = answer(keyPath)
        known.withLock { table in
            if table.count < Self.capacity { table[identifier] = (keyPath, value) }
        }
        return value
    }
}
