import Foundation

/// The positions of `ids` in the order of their record keys, near enough that lookups walk the tree from left to
/// right.
///
/// A batch of up to 65,536 IDs is sorted as plain integers, the fastest way: an ID's first eight bytes, big-endian
/// (which compare as LMDB compares the keys), with the bits its position needs in place of the lowest ones. IDs that
/// differ only in the bits given up may come in either order, which costs the lookups nothing: at least 48 leading
/// bits are kept, the whole timestamp of a time-ordered ID, so such IDs were made within the same millisecond and are
/// neighbours in the tree. Larger batches are sorted by ``exactKeyOrder(of:)``.
func keyOrder(of ids: [UUID]) -> [Int] {
    let positionBits = Int.bitWidth - max(ids.count - 1, 1).leadingZeroBitCount
    guard positionBits <= 16 else { return exactKeyOrder(of: ids) }
    let positionMask = UInt64(1) << UInt64(positionBits) - 1
    var keys = ids.enumerated().map { position, id in id.leadingKeyBits & ~positionMask | UInt64(position) }
    radixSort(&keys)
    return keys.map { Int($0 & positionMask) }
}

/// The positions of `ids` in the order of their first eight bytes, with equal IDs together in the order of their
/// positions: what a lookup of each distinct ID once needs. Distinct IDs that share their first eight bytes (which
/// time-ordered and random IDs practically never do) may come in either order.
func exactKeyOrder(of ids: [UUID]) -> [Int] {
    var entries = ids.enumerated().map { position, id in KeyedPosition(key: id.leadingKeyBits, position: position) }
    radixSort(&entries)
    return entries.map(\.position)
}

/// A value sorted by ``radixSort(_:)``.
private protocol RadixSortable {
    /// The integer the value sorts by.
    var radixKey: UInt64 { get }
}

extension UInt64: RadixSortable {
    var radixKey: UInt64 { self }
}

/// A position in a batch of IDs and the integer its ID sorts by.
private struct KeyedPosition: RadixSortable {
    var key: UInt64
    var position: Int

    var radixKey: UInt64 { key }
}

/// Sorts `values` by key, stably, least significant byte first, with one counting pass per byte in which the keys
/// differ: for the leading bytes of the IDs of a batch, which are mostly equal, three or four passes, several times
/// faster than a comparison sort.
private func radixSort<Value: RadixSortable>(_ values: inout [Value]) {
    guard let first = values.first?.radixKey else { return }
    var differing: UInt64 = 0
    for value in values { differing |= value.radixKey ^ first }
    var scratch = values
    var next = [Int](repeating: 0, count: 256)
    for shift in stride(from: UInt64(0), to: 64, by: 8) where differing >> shift & 0xFF != 0 {
        for digit in 0..<256 { next[digit] = 0 }
        for value in values { next[Int(value.radixKey >> shift & 0xFF)] += 1 }
        var start = 0
        for digit in 0..<256 { (next[digit], start) = (start, start + next[digit]) }
        for value in values {
            let digit = Int(value.radixKey >> shift & 0xFF)
            scratch[next[digit]] = value
            next[digit] += 1
        }
        swap(&values, &scratch)
    }
}

extension UUID {
    /// The first eight bytes of the ID read as a big-endian integer, which compares as LMDB compares the bytes.
    var leadingKeyBits: UInt64 {
        withKey(self) { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }
}
