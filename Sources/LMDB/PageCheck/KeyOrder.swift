/// The order LMDB keeps a tree's keys in, from the table's flags, as `mdb_default_cmp` chooses it.
enum KeyOrder {
    /// `mdb_cmp_memn`: bytes compared as unsigned, a prefix before the longer key.
    case bytes
    /// `mdb_cmp_memnr` (`MDB_REVERSEKEY`, `MDB_REVERSEDUP`): the same from the last byte to the first.
    case reversedBytes
    /// `mdb_cmp_cint`, `mdb_cmp_int`, `mdb_cmp_clong` (`MDB_INTEGERKEY`, `MDB_INTEGERDUP`): native unsigned
    /// integers, little-endian here. LMDB requires keys of one size; keys of different sizes compare as if the shorter
    /// were zero-extended, which gives a total order where LMDB's would read past the shorter key.
    case integer

    /// The order of a table's keys.
    init(keysOf flags: UInt16) {
        if flags & PageLayout.reverseKey != 0 {
            self = .reversedBytes
        } else if flags & PageLayout.integerKey != 0 {
            self = .integer
        } else {
            self = .bytes
        }
    }

    /// The order of a `dupSort` table's values.
    init(duplicatesOf flags: UInt16) {
        if flags & PageLayout.integerDup != 0 {
            self = .integer
        } else if flags & PageLayout.reverseDup != 0 {
            self = .reversedBytes
        } else {
            self = .bytes
        }
    }

    /// Whether `a` sorts strictly before `b`.
    func precedes(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        switch self {
        case .bytes:
            return a.lexicographicallyPrecedes(b)
        case .reversedBytes:
            return a.reversed().lexicographicallyPrecedes(b.reversed())
        case .integer:
            let length = max(a.count, b.count)
            for index in stride(from: length - 1, through: 0, by: -1) {
                let left = index < a.count ? a[a.startIndex + index] : 0
                let right = index < b.count ? b[b.startIndex + index] : 0
                if left != right { return left < right }
            }
            return false
        }
    }
}
