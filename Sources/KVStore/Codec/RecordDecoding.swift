import Foundation

/// The `Decoder` that reads the binary record format, handed to each value's
/// `init(from:)`.
///
/// It reads straight from the borrowed record bytes. One instance serves every
/// nested value of a record: it keeps the coding path as a stack and keeps
/// the entry tables of open keyed containers in one reused array, so decoding
/// allocates little beyond the container boxes Swift's Codable requires and
/// the decoded values themselves. Every read is bounds-checked; corrupt bytes
/// throw ``RecordFormatError``, and bytes of the wrong shape for the type throw
/// `DecodingError`.
///
/// Its mutable state is kept without run-time exclusivity checks, which cost
/// more than the decoding itself; the section "Unchecked storage" says why
/// that is safe, and is the only code that touches that storage.
final class RecordDecoding: Decoder {
    /// How a container finds its coding path.
    ///
    /// A plain integer, so copying a container (which Swift's container
    /// boxes do on every call) retains nothing but the decoder.
    struct ContainerPath {
        /// At least 0: the container belongs to the value being decoded, and
        /// its path is this long a prefix of the decoder's path stack.
        /// Negative: the container's own path is `explicitPaths[-raw - 1]`.
        let raw: Int

        /// The path made of the first `depth` keys of the decoder's path stack.
        static func depth(_ depth: Int) -> ContainerPath {
            ContainerPath(raw: depth)
        }
    }

    /// One entry of a keyed container: its key and where its value starts.
    struct Entry {
        /// The field id of an object entry, the zigzag payload of an `Int`
        /// key, or the offset of a string key's UTF-8.
        var key: UInt64
        /// The length of a string key's UTF-8; 0 for other entries.
        var keyLength: Int
        /// The offset of the entry's value; in a container's header entry,
        /// the index where the next lookup starts.
        var value: Int
    }

    /// No user info: records do not depend on configuration.
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Creates a decoder to reuse for many records through ``decodeRecord(_:from:fields:)``.
    init() {}

    /// Creates a decoder for the value at `valueOffset` (-1 for a missing
    /// value) of a record another decoder is reading, for `superDecoder()`.
    private init(reader: ByteReader, fields: FieldTable, valueOffset: Int, codingPath: [any CodingKey], depth: Int) {
        self.reader = reader
        self.fields = fields
        self.valueOffset = valueOffset
        self.codingPath = codingPath
        self.depth = depth
    }

    // MARK: Unchecked storage

    /// The decoder's mutable properties, whose storage has no run-time exclusivity checks.
    ///
    /// Each property below is an `@exclusivity(unchecked)` stored property, named `unchecked...`, behind a computed
    /// property of the plain name whose `@inline(__always)` accessors are the only code that touches it, so that the
    /// rest of the decoder is safe code. Run-time exclusivity checks cost more than the decoding itself: with them,
    /// Codable fetches and inserts run 25-30% slower.
    ///
    /// Invariant: the storage is safe because two accesses to one property, one of them a modification, never overlap:
    /// - The instance is confined to one thread: the type is not `Sendable`, it serves one decode call at a time
    ///   (``isBusy``; a decode started inside another gets an instance of its own), and `superDecoder()` makes a
    ///   new instance.
    /// - No access stays open across a call out. Each access reads, or mutates in place, a value (a ``ByteReader``,
    ///   an array, a ``FieldTable``, a ``FieldCursor``, an integer) whose methods never call back into the decoder;
    ///   a value's `init(from:)` and a ``FieldReader`` body run between accesses, never inside one. The one call
    ///   made inside an access, ``readEntries(into:_:at:kind:reader:depth:)`` filling ``entries`` in place, is
    ///   given a copy of ``reader`` and nothing else of the decoder.
    /// - An expression such as `codingPath = path(path) + [key]` reads first and modifies after, as the rules for
    ///   assignments and `inout` arguments have it.
    ///
    /// Debug builds check it: each `_modify` marks its property while its access is open, and an access that finds
    /// its property marked traps.
    ///
    /// The accessors are coroutines, and the optimizer inlines one only where its access ends in one place: an
    /// access with two ends, such as optional chaining on it (`fieldCursor.container?.f()`) or `try`s while a span
    /// of it lives, calls the accessor out of line. Such code reads the part it needs into a local first, or goes
    /// in a function of its own that the access wraps (as ``readEntries(into:_:at:kind:reader:depth:)`` does).
    private enum UncheckedProperty: UInt32 {
        case reader, fields, codingPath, valueOffset, depth, entries, entryCount, explicitPaths, isBusy, knownEnd
        case levelEnd, fieldCursor
    }

    #if DEBUG
        /// The unchecked properties whose `_modify` access is open, one bit each.
        private var propertiesBeingModified: UInt32 = 0
    #endif

    /// In debug builds, traps if `property` is being modified: an access now would overlap that one.
    @inline(__always)
    private func checkNoModification(of property: UncheckedProperty) {
        #if DEBUG
            precondition(
                propertiesBeingModified & (1 << property.rawValue) == 0,
                "Overlapping accesses to RecordDecoding.\(property)")
        #endif
    }

    /// In debug builds, marks `property` as being modified, after checking that no other access to it is open.
    @inline(__always)
    private func beginModification(of property: UncheckedProperty) {
        #if DEBUG
            checkNoModification(of: property)
            propertiesBeingModified |= 1 << property.rawValue
        #endif
    }

    /// In debug builds, ends the modification of `property` that ``beginModification(of:)`` began.
    @inline(__always)
    private func endModification(of property: UncheckedProperty) {
        #if DEBUG
            propertiesBeingModified &= ~(1 << property.rawValue)
        #endif
    }

    /// Bounds-checked access to the record.
    private(set) var reader: ByteReader {
        @inline(__always) _read {
            checkNoModification(of: .reader)
            yield unsafe uncheckedReader
        }
        @inline(__always) _modify {
            beginModification(of: .reader)
            defer { endModification(of: .reader) }
            yield unsafe &uncheckedReader
        }
    }
    @exclusivity(unchecked) private var uncheckedReader = ByteReader(BorrowedBytes.empty)

    /// The entity's field table, which names the field ids.
    private(set) var fields: FieldTable {
        @inline(__always) _read {
            checkNoModification(of: .fields)
            yield unsafe uncheckedFields
        }
        @inline(__always) _modify {
            beginModification(of: .fields)
            defer { endModification(of: .fields) }
            yield unsafe &uncheckedFields
        }
    }
    @exclusivity(unchecked) private var uncheckedFields = FieldTable()

    /// The path of the value being decoded, kept as a stack.
    private(set) var codingPath: [any CodingKey] {
        @inline(__always) _read {
            checkNoModification(of: .codingPath)
            yield unsafe uncheckedCodingPath
        }
        @inline(__always) _modify {
            beginModification(of: .codingPath)
            defer { endModification(of: .codingPath) }
            yield unsafe &uncheckedCodingPath
        }
    }
    @exclusivity(unchecked) private var uncheckedCodingPath: [any CodingKey] = []

    /// The offset of the tag of the value being decoded, or -1 for a missing value.
    private var valueOffset: Int {
        @inline(__always) _read {
            checkNoModification(of: .valueOffset)
            yield unsafe uncheckedValueOffset
        }
        @inline(__always) _modify {
            beginModification(of: .valueOffset)
            defer { endModification(of: .valueOffset) }
            yield unsafe &uncheckedValueOffset
        }
    }
    @exclusivity(unchecked) private var uncheckedValueOffset = -1

    /// How many containers enclose the value being decoded.
    private var depth: Int {
        @inline(__always) _read {
            checkNoModification(of: .depth)
            yield unsafe uncheckedDepth
        }
        @inline(__always) _modify {
            beginModification(of: .depth)
            defer { endModification(of: .depth) }
            yield unsafe &uncheckedDepth
        }
    }
    @exclusivity(unchecked) private var uncheckedDepth = 0

    /// The entry tables of the keyed containers in use, each after a header
    /// entry; storage past ``entryCount`` is reused.
    var entries: [Entry] {
        @inline(__always) _read {
            checkNoModification(of: .entries)
            yield unsafe uncheckedEntries
        }
        @inline(__always) _modify {
            beginModification(of: .entries)
            defer { endModification(of: .entries) }
            yield unsafe &uncheckedEntries
        }
    }
    @exclusivity(unchecked) private var uncheckedEntries: [Entry] = []

    /// The number of entries in use.
    private var entryCount: Int {
        @inline(__always) _read {
            checkNoModification(of: .entryCount)
            yield unsafe uncheckedEntryCount
        }
        @inline(__always) _modify {
            beginModification(of: .entryCount)
            defer { endModification(of: .entryCount) }
            yield unsafe &uncheckedEntryCount
        }
    }
    @exclusivity(unchecked) private var uncheckedEntryCount = 0

    /// The coding paths of nested containers in use.
    private var explicitPaths: [[any CodingKey]] {
        @inline(__always) _read {
            checkNoModification(of: .explicitPaths)
            yield unsafe uncheckedExplicitPaths
        }
        @inline(__always) _modify {
            beginModification(of: .explicitPaths)
            defer { endModification(of: .explicitPaths) }
            yield unsafe &uncheckedExplicitPaths
        }
    }
    @exclusivity(unchecked) private var uncheckedExplicitPaths: [[any CodingKey]] = []

    /// Whether a record is being decoded, so a reused instance is not entered twice.
    private(set) var isBusy: Bool {
        @inline(__always) _read {
            checkNoModification(of: .isBusy)
            yield unsafe uncheckedIsBusy
        }
        @inline(__always) _modify {
            beginModification(of: .isBusy)
            defer { endModification(of: .isBusy) }
            yield unsafe &uncheckedIsBusy
        }
    }
    @exclusivity(unchecked) private var uncheckedIsBusy = false

    /// The end of the last container whose end was found, to skip it without another walk.
    private var knownEnd: (offset: Int, end: Int) {
        @inline(__always) _read {
            checkNoModification(of: .knownEnd)
            yield unsafe uncheckedKnownEnd
        }
        @inline(__always) _modify {
            beginModification(of: .knownEnd)
            defer { endModification(of: .knownEnd) }
            yield unsafe &uncheckedKnownEnd
        }
    }
    @exclusivity(unchecked) private var uncheckedKnownEnd = (offset: -1, end: -1)

    /// The end of the current value, once one of its containers found it.
    private var levelEnd: Int {
        @inline(__always) _read {
            checkNoModification(of: .levelEnd)
            yield unsafe uncheckedLevelEnd
        }
        @inline(__always) _modify {
            beginModification(of: .levelEnd)
            defer { endModification(of: .levelEnd) }
            yield unsafe &uncheckedLevelEnd
        }
    }
    @exclusivity(unchecked) private var uncheckedLevelEnd = -1

    /// Where a ``FieldReader`` reads the record's top-level fields (see `RecordDecoding+Fields.swift`).
    var fieldCursor: FieldCursor {
        @inline(__always) _read {
            checkNoModification(of: .fieldCursor)
            yield unsafe uncheckedFieldCursor
        }
        @inline(__always) _modify {
            beginModification(of: .fieldCursor)
            defer { endModification(of: .fieldCursor) }
            yield unsafe &uncheckedFieldCursor
        }
    }
    @exclusivity(unchecked) private var uncheckedFieldCursor = FieldCursor()

    // MARK: Records

    /// Decodes a whole record: checks the version byte, decodes the value and
    /// checks that nothing follows it.
    ///
    /// The decoder keeps its buffers for the next record, and no reference to `bytes`.
    func decodeRecord<T: Decodable>(_ type: T.Type, from bytes: BorrowedBytes, fields: FieldTable) throws -> T {
        beginRecord(bytes, fields: fields)
        defer { endRecord() }
        let offset = try valueOffsetAfterVersion()
        let value = try decodeValue(T.self, at: offset)
        let end = try endOfValue(at: offset, depth: 0)
        guard end == reader.count else { throw RecordFormatError(.trailingBytes, at: end) }
        return value
    }

    /// Decodes a whole record through a ``FieldReader`` over its top-level fields: checks the version byte, lets
    /// `body` read the fields, and checks that nothing follows the record's object.
    func decodeFieldRecord<R>(
        from bytes: BorrowedBytes,
        fields: FieldTable,
        _ body: (FieldReader) throws -> R
    ) throws -> R {
        beginRecord(bytes, fields: fields)
        defer { endRecord() }
        let offset = try valueOffsetAfterVersion()
        valueOffset = offset
        let record = try beginFields(at: offset)
        let value = try body(FieldReader(decoding: self, record: record))
        let end = try endOfFields(at: offset)
        guard end == reader.count else { throw RecordFormatError(.trailingBytes, at: end) }
        return value
    }

    /// Starts decoding the record in `bytes` with `fields`; call ``endRecord()`` when done, even after an error.
    private func beginRecord(_ bytes: BorrowedBytes, fields: FieldTable) {
        reader = ByteReader(bytes)
        // A batch decodes every record with the same table: keeping it saves reference counting per record.
        if !self.fields.isIdentical(to: fields) {
            self.fields = fields
            fieldCursor.lookup = nil
        }
        isBusy = true
    }

    /// Checks the record's version byte and checksum, leaves the checksum out of the bytes read, and returns the
    /// offset of its value.
    private func valueOffsetAfterVersion() throws -> Int {
        reader = ByteReader(try RecordFormat.checkedBody(reader.buffer))
        return Self.recordValueOffset
    }

    /// The offset of a record's value, after its version byte.
    static let recordValueOffset = 1

    /// Lets go of the record's bytes and resets the state for the next record, keeping the buffers.
    private func endRecord() {
        isBusy = false
        reader = ByteReader(BorrowedBytes.empty)
        codingPath.clear()
        entryCount = 0
        explicitPaths.clear()
        valueOffset = -1
        depth = 0
        knownEnd = (-1, -1)
        levelEnd = -1
        fieldCursor.end()
    }

    // MARK: Values

    /// Decodes the value whose tag is at `offset`, reading the format's own
    /// tags for Date, UUID, URL, Decimal and Data, and calling `init(from:)`
    /// for other types.
    func decodeValue<T: Decodable>(_ type: T.Type, at offset: Int) throws -> T {
        if isSpecial(T.self) { return try decodeSpecialValue(T.self, at: offset, path: codingPath) }
        let savedOffset = valueOffset
        let savedLevelEnd = levelEnd
        let savedEntryCount = entryCount
        let pathCount = explicitPaths.count
        valueOffset = offset
        levelEnd = -1
        defer {
            valueOffset = savedOffset
            levelEnd = savedLevelEnd
            // The containers of the value are done with: free their entries and paths.
            entryCount = savedEntryCount
            if explicitPaths.count > pathCount { explicitPaths.removeSubrange(pathCount...) }
        }
        let value = try T(from: self)
        if levelEnd >= 0 { knownEnd = (offset, levelEnd) }
        return value
    }

    /// Decodes the child `key` of a container at `depth`, with the coding
    /// path and depth set for it.
    func decodeChild<T: Decodable>(
        _ type: T.Type, at offset: Int, key: any CodingKey, path: ContainerPath, depth: Int
    ) throws -> T {
        let savedDepth = self.depth
        self.depth = depth + 1
        defer { self.depth = savedDepth }
        if path.raw == codingPath.count {
            codingPath.append(key)
            defer { codingPath.removeLast() }
            return try decodeValue(T.self, at: offset)
        }
        let savedPath = codingPath
        codingPath = self.path(path) + [key]
        defer { codingPath = savedPath }
        return try decodeValue(T.self, at: offset)
    }

    /// Decodes the value at `offset` in place of the current one (a single
    /// value container's generic decode), with the container's coding path.
    func decodeInPlace<T: Decodable>(_ type: T.Type, at offset: Int, path: ContainerPath) throws -> T {
        if path.raw == codingPath.count {
            return try decodeValue(T.self, at: offset)
        }
        let savedPath = codingPath
        codingPath = self.path(path)
        defer { codingPath = savedPath }
        return try decodeValue(T.self, at: offset)
    }

    /// Whether `T` is one of the types the format has its own tags for.
    @inline(__always)
    func isSpecial<T>(_ type: T.Type) -> Bool {
        T.self == Date.self || T.self == UUID.self || T.self == URL.self || T.self == Decimal.self
            || T.self == Data.self
    }

    /// Reads a Date, UUID, URL, Decimal or Data from its own tag.
    ///
    /// Containers call it directly for such children, which skips the coding
    /// path and state bookkeeping of ``decodeChild(_:at:key:path:depth:)``.
    /// ``knownTypeCast(_:to:)`` converts each value to its own type, `T`:
    /// unlike `as?`, it needs no run-time cast or Optional metadata. The
    /// caller checks through ``isSpecial(_:)`` that `T` is one of these types.
    ///
    /// - Parameter path: The value's coding path, built only for an error.
    func decodeSpecialValue<T: Decodable>(
        _ type: T.Type, at offset: Int, path: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        var offset = offset
        if T.self == Date.self {
            return knownTypeCast(try decodeDate(at: &offset, path: path()), to: T.self)
        } else if T.self == UUID.self {
            return knownTypeCast(try decodeUUID(at: &offset, path: path()), to: T.self)
        } else if T.self == URL.self {
            return knownTypeCast(try decodeURL(at: &offset, path: path()), to: T.self)
        } else if T.self == Decimal.self {
            return knownTypeCast(try decodeDecimal(at: &offset, path: path()), to: T.self)
        }
        return knownTypeCast(try decodeData(at: &offset, path: path()), to: T.self)
    }

    /// Returns the offset just past the value at `offset`, reusing the end of
    /// the last container walked when it is that value.
    func endOfValue(at offset: Int, depth: Int) throws -> Int {
        if offset == knownEnd.offset { return knownEnd.end }
        return try reader.endOfValue(at: offset, depth: depth)
    }

    /// Records the end of the container at `offset`, found while reading it.
    func noteEnd(ofValueAt offset: Int, end: Int) {
        knownEnd = (offset, end)
        if offset == valueOffset { levelEnd = end }
    }

    // MARK: Containers

    /// Returns a keyed container over the current value.
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(
            try keyedContainer(keyedBy: Key.self, at: valueOffset, path: .depth(codingPath.count), depth: depth))
    }

    /// Returns an unkeyed container over the current value.
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try RecordUnkeyedDecodingContainer(
            decoding: self, at: valueOffset, path: .depth(codingPath.count), depth: depth)
    }

    /// Returns a container for the current value as a single value.
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        RecordSingleValueDecodingContainer(decoding: self, offset: valueOffset, path: .depth(codingPath.count))
    }

    /// Builds a keyed container over the object or dictionary at `offset`:
    /// walks its entries once, recording where each value starts.
    func keyedContainer<Key: CodingKey>(
        keyedBy type: Key.Type, at offset: Int, path: ContainerPath, depth: Int
    ) throws -> RecordKeyedDecodingContainer<Key> {
        guard offset >= 0 else {
            throw DecodingError.valueNotFound(
                [String: Any].self,
                DecodingError.Context(codingPath: self.path(path), debugDescription: "The value is missing."))
        }
        var position = offset
        let kind = try reader.readKind(at: &position)
        guard kind == .object || kind == .stringMap || kind == .intMap else {
            throw mismatch([String: Any].self, found: kind, at: offset, path: self.path(path))
        }
        try reader.checkDepth(depth, at: offset)
        let count = try reader.readCount(at: &position, minimumElementSize: 2)
        let start = entryCount + 1
        // Make room for the header and the entries at once, then fill them in
        // place: one uniqueness check per container instead of one per entry.
        let end = start + count
        if entries.count < end {
            entries.append(contentsOf: repeatElement(Entry(key: 0, keyLength: 0, value: 0), count: end - entries.count))
        }
        let reader = reader
        position = try Self.readEntries(
            into: &entries, start..<end, at: position, kind: kind, reader: reader, depth: depth)
        entryCount = end
        noteEnd(ofValueAt: offset, end: position)
        // The record's own object is its value, whatever decodes it (a single-value wrapper may), as the encoder's
        // is the first object at the empty coding path.
        return RecordKeyedDecodingContainer(
            decoding: self, kind: kind, start: start, count: count, path: path, depth: depth,
            scope: offset == Self.recordValueOffset ? .topLevel : .nested)
    }

    /// Fills `table[range]` with the entries of a container of `kind` at `depth` whose first entry is at `position`,
    /// and the header entry before them; returns the offset just past the last entry.
    ///
    /// It is a function of its own so that its caller's access to ``entries`` ends in one place, which lets the
    /// optimizer inline the accessor.
    private static func readEntries(
        into table: inout [Entry], _ range: Range<Int>, at position: Int, kind: ValueKind, reader: ByteReader,
        depth: Int
    ) throws(RecordFormatError) -> Int {
        // The header entry holds the index where the next lookup starts.
        table[range.lowerBound - 1] = Entry(key: 0, keyLength: 0, value: 0)
        var position = position
        for index in range {
            var entry = Entry(key: 0, keyLength: 0, value: 0)
            if kind == .stringMap {
                entry.keyLength = try reader.readLength(at: &position)
                entry.key = UInt64(position)
                position += entry.keyLength
            } else {
                entry.key = try reader.readVarint(at: &position)
            }
            entry.value = position
            table[index] = entry
            position = try reader.endOfValue(at: position, depth: depth + 1)
        }
        return position
    }

    /// Returns a decoder for the value at `offset` (-1 when missing), for `superDecoder()`.
    func superDecoder(at offset: Int, path: [any CodingKey], depth: Int) -> RecordDecoding {
        RecordDecoding(reader: reader, fields: fields, valueOffset: offset, codingPath: path, depth: depth)
    }

    /// Keeps `path` for a nested container while its value is being decoded.
    func explicitPath(_ path: [any CodingKey]) -> ContainerPath {
        explicitPaths.append(path)
        return ContainerPath(raw: -explicitPaths.count)
    }

    /// The coding path of a container.
    func path(_ path: ContainerPath) -> [any CodingKey] {
        if path.raw >= 0 { return Array(codingPath.prefix(path.raw)) }
        let index = -path.raw - 1
        return index < explicitPaths.count ? explicitPaths[index] : codingPath
    }
}

@available(*, unavailable)
extension RecordDecoding: Sendable {}
