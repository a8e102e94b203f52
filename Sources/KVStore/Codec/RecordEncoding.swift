import Foundation

/// The `Encoder` that writes the binary record format, handed to each value's
/// `encode(to:)`.
///
/// Bytes stream straight into one buffer. A keyed or unkeyed container
/// reserves one byte for its varint count when it opens, and the count is
/// patched in when it closes (moving the tail only for 128 entries or more).
/// Open containers form a stack: writing to a container closes the ones
/// above it, and a container used again after it was closed throws, so
/// containers must be used in nesting order (Swift's synthesized
/// implementations, and nearly all hand-written ones, do).
///
/// One instance serves every nested value of a record, so encoding allocates
/// little beyond the container boxes Swift's Codable requires. It is owned
/// by a ``RecordEncoder`` and must not be used from two threads at once.
///
/// Its mutable state is kept without run-time exclusivity checks, which cost
/// more than the encoding itself; the section "Unchecked storage" says why
/// that is safe, and is the only code that touches that storage.
final class RecordEncoding: Encoder {
    /// How a container finds its coding path.
    enum ContainerPath {
        /// A container of a value being encoded: its path is this long a
        /// prefix of the encoder's path, which is kept as a stack.
        case depth(Int)
        /// A nested container, or one made by a super encoder: its own path.
        case explicit([any CodingKey])
    }

    /// An open keyed or unkeyed container.
    struct Frame {
        /// Identifies the frame; increases with every frame opened.
        let id: Int
        /// ``ValueKind/object`` or ``ValueKind/array``.
        let kind: ValueKind
        /// Where the reserved count byte is.
        let countOffset: Int
        /// Entries written so far.
        var count: Int
        /// The field id of the last entry, to predict the next one.
        var lastID: UInt32 = 0
    }

    /// What a type is, as far as choosing its tag goes.
    enum TypeShape {
        /// Encoded through its own `encode(to:)`.
        case plain
        /// A `[String: V]`, written as a string map.
        case stringMap
        /// An `[Int: V]`, written as an int map.
        case intMap
        /// A dictionary with other `CodingKeyRepresentable` keys, written as a string map.
        case codingKeyMap
    }

    /// The value currently being encoded, which may become one container or one single value.
    struct Level {
        /// Identifies the level, so a single-value container can check it is still current.
        let id: Int
        /// How many frames were open when the level began.
        let stackDepth: Int
        /// The level's own container, once requested.
        var frameID: Int?
        /// Whether a single value was written for the level.
        var wroteValue = false
    }

    /// No user info: records do not depend on configuration.
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Whether an external value not saved yet encodes as a placeholder, for an encoding that is compared or decoded
    /// again but never stored (see `ExternalData`); otherwise it throws.
    var encodesUnsavedExternalValues = false

    /// Creates an encoding with an empty buffer.
    init() {}

    // MARK: Unchecked storage

    /// The encoder's mutable properties, whose storage has no run-time exclusivity checks.
    ///
    /// Each property below is an `@exclusivity(unchecked)` stored property, named `unchecked...`, behind a computed
    /// property of the plain name whose `@inline(__always)` accessors are the only code that touches it, so that the
    /// rest of the encoder is safe code. Run-time exclusivity checks cost more than the encoding itself: with them,
    /// Codable inserts and fetches run 25-30% slower.
    ///
    /// Invariant: the storage is safe because two accesses to one property, one of them a modification, never overlap:
    /// - The instance is confined to one thread: the type is not `Sendable`, and its ``RecordEncoder`` makes a new
    ///   one when the last is still referenced, as by a value that kept it.
    /// - No access stays open across a call out. Each access reads, or mutates in place, a value (an array, a
    ///   ``FieldTable``, a ``TypeCache``, an integer) through its own methods or a helper such as
    ///   `Checksum.append(to:from:)`, none of which calls back into the encoder; a value's `encode(to:)` and a
    ///   ``FieldWriter`` body run between accesses, never inside one.
    /// - An expression such as `bytes.append(bytes.count)` reads first and modifies after, as the rules for
    ///   `inout` arguments have it.
    ///
    /// Debug builds check it: each `_modify` marks its property while its access is open, and an access that finds
    /// its property marked traps.
    ///
    /// The accessors are coroutines, and the optimizer inlines one only where its access ends in one place: an
    /// access with two ends, such as optional chaining on it or `try`s while a span of it lives, calls the accessor
    /// out of line. Such code reads the part it needs into a local first, or goes in a function of its own that
    /// the access wraps.
    private enum UncheckedProperty: UInt32 {
        case bytes, fields, codingPath, openFrames, nextFrameID, level, nextLevelID, mapDepth, rootFrameID
        case pendingKind, firstFieldIDs, shapes
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
                "Overlapping accesses to RecordEncoding.\(property)")
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

    /// The output buffer; the record ends at `bytes.count`.
    var bytes: [UInt8] {
        @inline(__always) _read {
            checkNoModification(of: .bytes)
            yield unsafe uncheckedBytes
        }
        @inline(__always) _modify {
            beginModification(of: .bytes)
            defer { endModification(of: .bytes) }
            yield unsafe &uncheckedBytes
        }
    }
    @exclusivity(unchecked) private var uncheckedBytes: [UInt8] = []

    /// The entity's field names; new names are interned as keys are written.
    var fields: FieldTable {
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

    /// The path of the value being encoded, kept as a stack.
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

    /// Open containers, innermost last.
    private var openFrames: [Frame] {
        @inline(__always) _read {
            checkNoModification(of: .openFrames)
            yield unsafe uncheckedOpenFrames
        }
        @inline(__always) _modify {
            beginModification(of: .openFrames)
            defer { endModification(of: .openFrames) }
            yield unsafe &uncheckedOpenFrames
        }
    }
    @exclusivity(unchecked) private var uncheckedOpenFrames: [Frame] = []

    /// The id the next frame gets.
    private var nextFrameID: Int {
        @inline(__always) _read {
            checkNoModification(of: .nextFrameID)
            yield unsafe uncheckedNextFrameID
        }
        @inline(__always) _modify {
            beginModification(of: .nextFrameID)
            defer { endModification(of: .nextFrameID) }
            yield unsafe &uncheckedNextFrameID
        }
    }
    @exclusivity(unchecked) private var uncheckedNextFrameID = 1

    /// The value being encoded.
    private var level: Level {
        @inline(__always) _read {
            checkNoModification(of: .level)
            yield unsafe uncheckedLevel
        }
        @inline(__always) _modify {
            beginModification(of: .level)
            defer { endModification(of: .level) }
            yield unsafe &uncheckedLevel
        }
    }
    @exclusivity(unchecked) private var uncheckedLevel = Level(id: 0, stackDepth: 0)

    /// The id the next level gets.
    private var nextLevelID: Int {
        @inline(__always) _read {
            checkNoModification(of: .nextLevelID)
            yield unsafe uncheckedNextLevelID
        }
        @inline(__always) _modify {
            beginModification(of: .nextLevelID)
            defer { endModification(of: .nextLevelID) }
            yield unsafe &uncheckedNextLevelID
        }
    }
    @exclusivity(unchecked) private var uncheckedNextLevelID = 1

    /// How many dictionaries enclose the value being encoded (they are not frames).
    private var mapDepth: Int {
        @inline(__always) _read {
            checkNoModification(of: .mapDepth)
            yield unsafe uncheckedMapDepth
        }
        @inline(__always) _modify {
            beginModification(of: .mapDepth)
            defer { endModification(of: .mapDepth) }
            yield unsafe &uncheckedMapDepth
        }
    }
    @exclusivity(unchecked) private var uncheckedMapDepth = 0

    /// The top-level keyed container, whose fields get their kinds recorded.
    private var rootFrameID: Int {
        @inline(__always) _read {
            checkNoModification(of: .rootFrameID)
            yield unsafe uncheckedRootFrameID
        }
        @inline(__always) _modify {
            beginModification(of: .rootFrameID)
            defer { endModification(of: .rootFrameID) }
            yield unsafe &uncheckedRootFrameID
        }
    }
    @exclusivity(unchecked) private var uncheckedRootFrameID = 0

    /// A top-level field whose kind is not known yet, and where its tag byte goes.
    private var pendingKind: (id: UInt32, offset: Int)? {
        @inline(__always) _read {
            checkNoModification(of: .pendingKind)
            yield unsafe uncheckedPendingKind
        }
        @inline(__always) _modify {
            beginModification(of: .pendingKind)
            defer { endModification(of: .pendingKind) }
            yield unsafe &uncheckedPendingKind
        }
    }
    @exclusivity(unchecked) private var uncheckedPendingKind: (id: UInt32, offset: Int)?

    /// The id of the first field each key type wrote last time, to predict it.
    private var firstFieldIDs: TypeCache<UInt32> {
        @inline(__always) _read {
            checkNoModification(of: .firstFieldIDs)
            yield unsafe uncheckedFirstFieldIDs
        }
        @inline(__always) _modify {
            beginModification(of: .firstFieldIDs)
            defer { endModification(of: .firstFieldIDs) }
            yield unsafe &uncheckedFirstFieldIDs
        }
    }
    @exclusivity(unchecked) private var uncheckedFirstFieldIDs = TypeCache<UInt32>(placeholder: 0)

    /// Which types are dictionaries written as maps.
    private var shapes: TypeCache<TypeShape> {
        @inline(__always) _read {
            checkNoModification(of: .shapes)
            yield unsafe uncheckedShapes
        }
        @inline(__always) _modify {
            beginModification(of: .shapes)
            defer { endModification(of: .shapes) }
            yield unsafe &uncheckedShapes
        }
    }
    @exclusivity(unchecked) private var uncheckedShapes = TypeCache<TypeShape>(placeholder: .plain)

    // MARK: Records

    /// Appends one record, version byte included, for `value` to ``bytes``.
    ///
    /// On error the buffer is cut back to where it was.
    func encodeRecord<T: Encodable>(_ value: T) throws {
        let start = bytes.count
        openFrames.clear()
        codingPath.clear()
        level = Level(id: 0, stackDepth: 0)
        rootFrameID = 0
        pendingKind = nil
        mapDepth = 0
        bytes.append(RecordFormat.version)
        do {
            try encodeValue(value)
        } catch {
            bytes.removeSubrange(start...)
            throw error
        }
        Checksum.append(to: &bytes, from: start)
    }

    /// Appends one record, version byte included, whose top-level fields `body` writes through a ``FieldWriter``.
    ///
    /// On error the buffer is cut back to where it was.
    func encodeFieldRecord(_ body: (FieldWriter) throws -> Void) throws {
        let start = bytes.count
        openFrames.clear()
        codingPath.clear()
        level = Level(id: nextLevelID, stackDepth: 0)
        nextLevelID += 1
        rootFrameID = 0
        pendingKind = nil
        mapDepth = 0
        bytes.append(RecordFormat.version)
        do {
            try body(FieldWriter(encoding: self, frameID: levelFrame(.object)))
            try finishLevel()
        } catch {
            bytes.removeSubrange(start...)
            throw error
        }
        Checksum.append(to: &bytes, from: start)
    }

    // MARK: Values

    /// Encodes one value at the end of the buffer, using its own tag for the
    /// types the format knows and its `encode(to:)` otherwise.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if try encodeSpecialValue(value) { return }
        let saved = level
        level = Level(id: nextLevelID, stackDepth: openFrames.count)
        nextLevelID += 1
        defer { level = saved }
        try value.encode(to: self)
        try finishLevel()
    }

    /// Encodes `value` as the child `key` of the value being encoded.
    func encodeValue<T: Encodable>(_ value: T, at key: some CodingKey) throws {
        codingPath.append(key)
        defer { codingPath.removeLast() }
        try encodeValue(value)
    }

    /// Writes Date, UUID, URL, Decimal, Data and dictionaries whose keys are
    /// data (`String`, `Int` or other `CodingKeyRepresentable` keys) with their
    /// own tags; returns false for other types.
    private func encodeSpecialValue<T: Encodable>(_ value: T) throws -> Bool {
        if encodeLeafValue(value) { return true }
        let shape = shapes.value(for: T.self) ?? learnShape(of: T.self)
        switch shape {
        case .plain:
            return false
        case .stringMap:
            guard let map = value as? any StringKeyedDictionaryEncodable else { return false }
            try encodeMap { try map.encodeEntries(to: self) }
        case .intMap:
            guard let map = value as? any IntKeyedDictionaryEncodable else { return false }
            try encodeMap { try map.encodeEntries(to: self) }
        case .codingKeyMap:
            guard let map = value as? any CodingKeyDictionaryEncodable else { return false }
            try encodeMap { try map.encodeEntries(to: self) }
        }
        return true
    }

    /// Finds out whether `type` is a dictionary written as a map, and caches it.
    private func learnShape<T>(of type: T.Type) -> TypeShape {
        let shape: TypeShape =
            if T.self is any StringKeyedDictionaryEncodable.Type {
                .stringMap
            } else if T.self is any IntKeyedDictionaryEncodable.Type {
                .intMap
            } else if T.self is any CodingKeyDictionaryEncodable.Type {
                .codingKeyMap
            } else {
                .plain
            }
        shapes.set(shape, for: T.self)
        return shape
    }

    /// Writes a Date, UUID, URL, Decimal or Data with its own tag; returns
    /// false for other types.
    ///
    /// Containers call it first for their children: these values cannot
    /// fail, so they skip the coding path and rollback bookkeeping.
    @inline(__always)
    func encodeLeafValue<T: Encodable>(_ value: T) -> Bool {
        // `knownTypeCast` converts a value to its own type, just checked: unlike `as?`, it needs no run-time cast or
        // Optional metadata.
        if T.self == Date.self {
            let date = knownTypeCast(value, to: Date.self)
            bytes.appendTagged(.date, littleEndian: date.timeIntervalSinceReferenceDate.bitPattern, count: 8)
        } else if T.self == UUID.self {
            bytes.appendTagged(.uuid, uuid: knownTypeCast(value, to: UUID.self))
        } else if T.self == URL.self {
            bytes.appendTagged(.url, text: knownTypeCast(value, to: URL.self).absoluteString)
        } else if T.self == Decimal.self {
            let decimal = knownTypeCast(value, to: Decimal.self)
            bytes.appendTagged(.decimal, text: decimal.isNaN ? RecordFormat.decimalNaN : decimal.description)
        } else if T.self == Data.self {
            bytes.appendTagged(.data, bytes: knownTypeCast(value, to: Data.self))
        } else {
            return false
        }
        return true
    }

    /// Runs `body`, which writes a dictionary, counting it as a level of nesting.
    private func encodeMap(_ body: () throws -> Void) throws {
        guard openFrames.count + mapDepth < RecordFormat.maximumDepth else { throw tooDeepError() }
        mapDepth += 1
        defer { mapDepth -= 1 }
        try body()
    }

    /// Closes the containers of the level that just ended; a value that wrote
    /// nothing becomes an empty object, as JSONEncoder writes `{}`.
    private func finishLevel() throws {
        closeFrames(downTo: level.stackDepth)
        if level.frameID == nil && !level.wroteValue {
            bytes.append(ValueKind.object.rawValue)
            bytes.append(0)
        }
    }

    // MARK: Containers

    /// Returns the keyed container of the current value.
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            RecordKeyedEncodingContainer<Key>(
                encoding: self, frameID: levelFrame(.object), path: .depth(codingPath.count)))
    }

    /// Returns the unkeyed container of the current value.
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RecordUnkeyedEncodingContainer(encoding: self, frameID: levelFrame(.array), path: .depth(codingPath.count))
    }

    /// Returns a container for the current value as a single value.
    func singleValueContainer() -> any SingleValueEncodingContainer {
        RecordSingleValueEncodingContainer(encoding: self, slot: .level(level.id), path: .depth(codingPath.count))
    }

    /// Opens the current level's container of `kind`, or returns the one
    /// already open (a subclass and its superclass may share it); returns 0,
    /// an id no frame has, when the level cannot have that container.
    private func levelFrame(_ kind: ValueKind) -> Int {
        if let frameID = level.frameID {
            return openFrames.last(where: { $0.id == frameID })?.kind == kind ? frameID : 0
        }
        guard !level.wroteValue else { return 0 }
        let frameID = openFrame(kind)
        level.frameID = frameID
        // The first object of a value at the empty path holds the record's top-level fields.
        if rootFrameID == 0 && kind == .object && codingPath.isEmpty { rootFrameID = frameID }
        return frameID
    }

    /// Writes a container's tag and reserves its count byte; returns the new
    /// frame's id.
    ///
    /// When containers would nest too deeply it writes null instead, keeping
    /// the record well-formed, and returns 0, so the container throws when used.
    func openFrame(_ kind: ValueKind) -> Int {
        guard openFrames.count + mapDepth < RecordFormat.maximumDepth else {
            writeNil()
            return 0
        }
        let frame = Frame(id: nextFrameID, kind: kind, countOffset: bytes.count + 1, count: 0)
        nextFrameID += 1
        bytes.append(kind.rawValue)
        bytes.append(0)
        openFrames.append(frame)
        return frame.id
    }

    /// Makes `frameID` the innermost open frame, closing those above it, and
    /// returns its index in the stack.
    private func activate(_ frameID: Int) throws -> Int {
        var index = openFrames.count - 1
        while index >= 0 && openFrames[index].id >= frameID {
            if openFrames[index].id == frameID {
                closeFrames(downTo: index + 1)
                return index
            }
            index -= 1
        }
        throw EncodingError.invalidValue(
            frameID,
            EncodingError.Context(
                codingPath: codingPath,
                debugDescription: frameID == 0
                    ? "The container cannot be used here: the value already has another kind of container "
                        + "or a single value, or containers nest deeper than \(RecordFormat.maximumDepth) levels."
                    : "The container was used after a container that encloses it, or a sibling, was written to. "
                        + "The record encoder writes containers in nesting order."))
    }

    /// Pops and closes open frames until `depth` remain, writing their counts.
    private func closeFrames(downTo depth: Int) {
        while openFrames.count > depth {
            let frame = openFrames.removeLast()
            if frame.id == rootFrameID { resolvePendingKind() }
            if frame.count < 0x80 {
                bytes[frame.countOffset] = UInt8(frame.count)
            } else {
                var count: [UInt8] = []
                count.appendVarint(UInt64(frame.count))
                bytes.replaceSubrange(frame.countOffset..<(frame.countOffset + 1), with: count)
            }
        }
    }

    /// Starts the entry `key` of the keyed container `frameID`: writes the
    /// field id and counts the entry.
    ///
    /// - Returns: Where the entry begins, for rolling it back.
    @discardableResult
    func beginField<Key: CodingKey>(_ key: Key, in frameID: Int) throws -> Int {
        let index = try activate(frameID)
        let mark = bytes.count
        let name = key.stringValue
        // Types write their fields in the same order every time, and their
        // ids were interned in that order: predict the id and check the
        // prediction with one string comparison instead of hashing the name.
        let isFirst = openFrames[index].count == 0
        let predicted = isFirst ? firstFieldIDs.value(for: Key.self) ?? 0 : openFrames[index].lastID &+ 1
        let scope: FieldScope = frameID == rootFrameID ? .topLevel : .nested
        let id = fields.id(UInt64(predicted), isNamed: name, in: scope) ? predicted : fields.id(for: name, in: scope)
        if isFirst { firstFieldIDs.set(id, for: Key.self) }
        openFrames[index].lastID = id
        bytes.appendVarint(UInt64(id))
        openFrames[index].count += 1
        if frameID == rootFrameID {
            resolvePendingKind()
            if fields.kind(of: id) == nil { pendingKind = (id, bytes.count) }
        }
        return mark
    }

    /// Starts the top-level field `name` for a ``FieldWriter``: closes what the previous field left open, writes the
    /// field id and counts the entry; the caller then writes the value and calls ``endDirectField(_:kind:)``.
    ///
    /// It does what ``beginField(_:in:)`` does for the record's own container, without a coding key.
    ///
    /// - Returns: The field's id.
    @inline(__always)
    func beginDirectField(_ name: String, in frameID: Int) throws -> UInt32 {
        let index = openFrames.count == 1 && openFrames[0].id == frameID ? 0 : try activate(frameID)
        resolvePendingKind()
        let predicted = openFrames[index].lastID &+ 1
        let id =
            fields.id(UInt64(predicted), isNamed: name, in: .topLevel)
            ? predicted : fields.id(for: name, in: .topLevel)
        openFrames[index].lastID = id
        openFrames[index].count += 1
        bytes.appendVarint(UInt64(id))
        return id
    }

    /// Ends a top-level field that a ``FieldWriter`` wrote: records the kind of its value if the field had none.
    @inline(__always)
    func endDirectField(_ id: UInt32, kind: ValueKind) {
        fields.observe(kind, for: id)
    }

    /// Starts an element of the unkeyed container `frameID`.
    ///
    /// - Returns: Where the element begins, for rolling it back.
    @discardableResult
    func beginElement(in frameID: Int) throws -> Int {
        let index = try activate(frameID)
        openFrames[index].count += 1
        return bytes.count
    }

    /// Starts the value of a super encoder: an entry `key` of the keyed
    /// container `frameID`, or the next element of that unkeyed container
    /// when `key` is nil.
    ///
    /// - Returns: Where the entry begins, for rolling it back.
    @discardableResult
    func beginSuperValue(in frameID: Int, key: (any CodingKey)?) throws -> Int {
        if let key {
            try beginField(key, in: frameID)
        } else {
            try beginElement(in: frameID)
        }
    }

    /// Checks that a single value may be written to `slot`, and marks it written.
    ///
    /// - Returns: Where the value, or the super encoder's entry, begins.
    @discardableResult
    func beginSingleValue(_ slot: RecordSingleValueEncodingContainer.Slot) throws -> Int {
        switch slot {
        case .level(let id):
            guard id == level.id, level.frameID == nil, !level.wroteValue else {
                throw EncodingError.invalidValue(
                    id,
                    EncodingError.Context(
                        codingPath: codingPath,
                        debugDescription: "A single value container can encode one value, and only while "
                            + "its value is being encoded, without another container."))
            }
            level.wroteValue = true
            return bytes.count
        case .superValue(let encoder):
            return try encoder.beginSingleValue()
        }
    }

    /// Encodes `value` through a single value container, rolling back if it throws.
    func encodeSingleValue<T: Encodable>(
        _ value: T, slot: RecordSingleValueEncodingContainer.Slot, path: ContainerPath
    ) throws {
        let mark = try beginSingleValue(slot)
        let depth = openFrames.count
        let savedPending = pendingKind
        do {
            if case .depth(let depth) = path, depth == codingPath.count {
                try encodeValue(value)
            } else {
                let saved = codingPath
                codingPath = self.path(path)
                defer { codingPath = saved }
                try encodeValue(value)
            }
        } catch {
            if openFrames.count > depth { openFrames.removeSubrange(depth...) }
            switch slot {
            case .level(let id):
                if id == level.id { level.wroteValue = false }
            case .superValue(let encoder):
                encoder.rollBack()
                if let last = openFrames.indices.last, openFrames[last].id == encoder.parentFrameID {
                    openFrames[last].count -= 1
                }
            }
            pendingKind = savedPending.flatMap { $0.offset < mark ? $0 : nil }
            bytes.removeSubrange(mark...)
            throw error
        }
    }

    /// Records the kind of the pending top-level field from its tag byte.
    private func resolvePendingKind() {
        guard let pending = pendingKind else { return }
        pendingKind = nil
        guard pending.offset < bytes.count, let kind = ValueKind(rawValue: bytes[pending.offset]) else { return }
        if kind != .null { fields.observe(kind, for: pending.id) }
    }

    /// The coding path of a container.
    func path(_ path: ContainerPath) -> [any CodingKey] {
        switch path {
        case .depth(let depth): Array(codingPath.prefix(depth))
        case .explicit(let path): path
        }
    }

    /// Encodes a child value of a container, with the coding path set for it,
    /// and rolls the buffer back if it throws (so a caller that catches the
    /// error is left with a well-formed record).
    ///
    /// - Parameters:
    ///   - frameID: The container the value is an entry of, already counted by `beginField` or `beginElement`.
    ///   - mark: Where the entry began, before its field id.
    func encodeChild<T: Encodable>(
        _ value: T, key: any CodingKey, path: ContainerPath, frameID: Int, mark: Int
    ) throws {
        let depth = openFrames.count
        let savedPending = pendingKind
        do {
            if case .depth(let depth) = path, depth == codingPath.count {
                codingPath.append(key)
                defer { codingPath.removeLast() }
                try encodeValue(value)
            } else {
                let saved = codingPath
                codingPath = self.path(path) + [key]
                defer { codingPath = saved }
                try encodeValue(value)
            }
        } catch {
            if openFrames.count > depth { openFrames.removeSubrange(depth...) }
            if let last = openFrames.indices.last, openFrames[last].id == frameID { openFrames[last].count -= 1 }
            pendingKind = savedPending.flatMap { $0.offset < mark ? $0 : nil }
            bytes.removeSubrange(mark...)
            throw error
        }
    }

    /// The error for containers nested deeper than the format allows.
    func tooDeepError() -> EncodingError {
        EncodingError.invalidValue(
            codingPath.count,
            EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "Containers nest deeper than \(RecordFormat.maximumDepth) levels."))
    }
}

@available(*, unavailable)
extension RecordEncoding: Sendable {}
