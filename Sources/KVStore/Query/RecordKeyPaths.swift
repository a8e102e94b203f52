import Foundation
import LMDB

/// Which key paths are a model's `id`, the record key, remembered for each key path met: `#Predicate` makes its key
/// paths on the concrete model type, and a key path made in generic code (`\M.id`, through `Identifiable`) never equals
/// one of those, so the first check of a key path compares its printed form, which costs more than the rest of a
/// plan.
///
/// The key paths are kept with their answers: a key path literal is made once per place in the program, so the table
/// stays small, and since each is held, its object identifier cannot come back for another key path. The table stops
/// growing at ``capacity`` entries (key paths appended at run time each time), and later ones are checked each time.
enum RecordKeyPaths {
    /// The most key paths remembered.
    static let capacity = 512

    private static let known = Locked<[ObjectIdentifier: (keyPath: AnyKeyPath, isID: Bool)]>([:])

    /// Whether `keyPath` is the `id` of `Root`.
    static func isID<Root>(_ keyPath: AnyKeyPath, of root: Root.Type) -> Bool {
        guard keyPath is KeyPath<Root, UUID> else { return false }
        let identifier = ObjectIdentifier(keyPath)
        if let known = known.withLock({ $0[identifier] }) { return known.isID }
        let isID = String(describing: keyPath) == "\\\(Root.self).id"
        known.withLock { table in
            if table.count < capacity { table[identifier] = (keyPath, isID) }
        }
        return isID
    }
}
