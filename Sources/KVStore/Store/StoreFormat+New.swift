import Foundation

extension StoreFormat {
    /// The format entry of a new store, written by this version of KVStore, for a writer other than a container that
    /// creates one (`kvtool import` into a directory that holds no store yet); a container writes the same entry when
    /// it creates a store.
    ///
    /// - Parameter created: When the store was created.
    package static func newStore(created: Date) -> StoreFormat {
        StoreFormat(formatVersion: Catalog.newStoreFormatVersion, created: created)
    }
}
