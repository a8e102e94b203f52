/// The encoder `superEncoder()` returns: encodes one value as an entry of its
/// parent container, written when the encoder is first used.
///
/// Writing late lets code take the super encoder, write its own fields, and
/// then call `super.encode(to:)`; an encoder never used writes nothing, and
/// the entry then decodes as missing.
final class RecordSuperEncoder: Encoder {
    /// The encoder that owns the buffer.
    let encoding: RecordEncoding
    /// The container the value is an entry of.
    let parentFrameID: Int
    /// The entry's key, or nil for an element of an unkeyed container.
    let key: (any CodingKey)?
    /// The path of keys to the value.
    let codingPath: [any CodingKey]
    /// No user info: records do not depend on configuration.
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The value's container, once requested.
    private var frameID: Int?
    /// The kind of that container.
    private var frameKind: ValueKind?
    /// Whether a single value was written.
    private var wroteValue = false

    /// Creates an encoder for the entry `key` of the container `parentFrameID`.
    init(encoding: RecordEncoding, parentFrameID: Int, key: (any CodingKey)?, codingPath: [any CodingKey]) {
        self.encoding = encoding
        self.parentFrameID = parentFrameID
        self.key = key
        self.codingPath = codingPath
    }

    /// Returns the value's keyed container, writing the entry on first use.
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            RecordKeyedEncodingContainer<Key>(
                encoding: encoding, frameID: frame(.object), path: .explicit(codingPath)))
    }

    /// Returns the value's unkeyed container, writing the entry on first use.
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RecordUnkeyedEncodingContainer(encoding: encoding, frameID: frame(.array), path: .explicit(codingPath))
    }

    /// Returns a container for the value as a single value.
    func singleValueContainer() -> any SingleValueEncodingContainer {
        RecordSingleValueEncodingContainer(encoding: encoding, slot: .superValue(self), path: .explicit(codingPath))
    }

    /// Writes the entry and marks it as a single value.
    ///
    /// - Returns: Where the entry begins.
    func beginSingleValue() throws -> Int {
        guard frameID == nil, !wroteValue else {
            throw EncodingError.invalidValue(
                codingPath.count,
                EncodingError.Context(
                    codingPath: codingPath, debugDescription: "The super encoder's value was already encoded."))
        }
        let mark = try encoding.beginSuperValue(in: parentFrameID, key: key)
        wroteValue = true
        return mark
    }

    /// Forgets a single value whose encoding failed and was rolled back.
    func rollBack() {
        wroteValue = false
    }

    /// Opens the value's container of `kind` on first use, or returns it;
    /// returns 0 when the value already is something else.
    private func frame(_ kind: ValueKind) -> Int {
        if let frameID { return frameKind == kind ? frameID : 0 }
        guard !wroteValue else { return 0 }
        do {
            try encoding.beginSuperValue(in: parentFrameID, key: key)
        } catch {
            return 0
        }
        let frameID = encoding.openFrame(kind)
        self.frameID = frameID
        frameKind = kind
        return frameID
    }
}
