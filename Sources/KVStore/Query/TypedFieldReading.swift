import Foundation

// Reading an aggregated attribute's values without decoding models, typed from the start: from a record's field
// through a ``FieldReader``'s direct reads, and from an index key's bytes. An aggregate picks its readers once, so the
// per-record and per-key work has no dynamic casts.

/// A type whose values an aggregate reads from a record's top-level field directly.
protocol StoredFieldReadable {
    /// The value the record holds under `name`; `nil` when it holds none (for an optional type: `.some(nil)`).
    ///
    /// - Throws: What the reader throws: `DecodingError` for a value of another type, ``RecordFormatError`` for
    ///   damaged bytes.
    static func read(from fields: borrowing FieldReader, name: String) throws -> Self?
}

extension String: StoredFieldReadable {
    static func read(from fields: borrowing FieldReader, name: String) throws -> Self? {
        try fields.decodeIfPresent(String.self, forKey: name)
    }
}

extension Bool: StoredFieldReadable {
    static func read(from fields: borrowing FieldReader, name: String) throws -> Self? {
        try fields.decodeIfPresent(Bool.self, forKey: name)
    }
}

extension Double: StoredFieldReadable {
    static func read(from fields: borrowing FieldReader, name: String) throws -> Self? {
        try fields.decodeIfPresent(Double.self, forKey: name)
    }
}

extension Date: StoredFieldReadable {
    static func read(from fields: borrowing FieldReader, name: String) throws -> Self? {
        try fields.decodeIfPresent(Date.self, forKey: name)
    }
}

extension UUID: StoredFieldReadable {
    static func read(from fields: borrowing FieldReader, name: String) throws -> Self? {
        try fields.decodeIfPresent(UUID.self, forKey: name)
    }
}

extension StoredFieldReadable where Self: FixedWidthInteger & Decodable {
    static func read(from fields: borrowing FieldReader, name: String) throws -> Self? {
        try fields.decodeIfPresent(Self.self, forKey: name)
    }
}

extension Int: StoredFieldReadable {}
extension Int8: StoredFieldReadable {}
extension Int16: StoredFieldReadable {}
extension Int32: StoredFieldReadable {}
extension Int64: StoredFieldReadable {}
extension UInt: StoredFieldReadable {}
extension UInt8: StoredFieldReadable {}
extension UInt16: StoredFieldReadable {}
extension UInt32: StoredFieldReadable {}
extension UInt64: StoredFieldReadable {}

extension Optional: StoredFieldReadable where Wrapped: StoredFieldReadable {
    /// A missing or null field is `nil`, a value of the attribute's optional type.
    static func read(from fields: borrowing FieldReader, name: String) throws -> Self? {
        .some(try Wrapped.read(from: fields, name: name))
    }
}

/// A type whose values an aggregate reads back from the key of an index on the attribute alone.
protocol IndexKeyReadable {
    /// The value a whole key holds, or `nil` when the bytes are not a key of this type.
    static func read(indexKey bytes: BorrowedBytes) -> Self?
}

extension IndexKeyReadable where Self: FixedWidthInteger {
    static func read(indexKey bytes: BorrowedBytes) -> Self? {
        guard bytes.count == 9, bytes[0] == IndexKey.present else { return nil }
        var bits: UInt64 = 0
        for index in 1..<9 { bits = bits << 8 | UInt64(bytes[index]) }
        return Self.isSigned ? Self(exactly: Int64(bitPattern: bits ^ (1 << 63))) : Self(exactly: bits)
    }
}

extension Int: IndexKeyReadable {}
extension Int8: IndexKeyReadable {}
extension Int16: IndexKeyReadable {}
extension Int32: IndexKeyReadable {}
extension Int64: IndexKeyReadable {}
extension UInt: IndexKeyReadable {}
extension UInt8: IndexKeyReadable {}
extension UInt16: IndexKeyReadable {}
extension UInt32: IndexKeyReadable {}
extension UInt64: IndexKeyReadable {}

extension Date: IndexKeyReadable {
    static func read(indexKey bytes: BorrowedBytes) -> Self? {
        guard bytes.count == 9, bytes[0] == IndexKey.present else { return nil }
        var bits: UInt64 = 0
        for index in 1..<9 { bits = bits << 8 | UInt64(bytes[index]) }
        return Date(timeIntervalSinceReferenceDate: IndexKey.double(fromOrderedBits: bits))
    }
}

extension Bool: IndexKeyReadable {
    static func read(indexKey bytes: BorrowedBytes) -> Self? {
        guard bytes.count == 2, bytes[0] == IndexKey.present, bytes[1] < 2 else { return nil }
        return bytes[1] == 1
    }
}

extension UUID: IndexKeyReadable {
    static func read(indexKey bytes: BorrowedBytes) -> Self? {
        guard bytes.count == 17, bytes[0] == IndexKey.present else { return nil }
        return bytes.loadUUID(fromByteOffset: 1)
    }
}

extension String: IndexKeyReadable {
    static func read(indexKey bytes: BorrowedBytes) -> Self? {
        guard case .string(let value)? = try? IndexKey.decodeComponents(bytes, kinds: [.string]).first else {
            return nil
        }
        return value
    }
}

extension Optional: IndexKeyReadable where Wrapped: IndexKeyReadable {
    /// The absent key is `nil`.
    static func read(indexKey bytes: BorrowedBytes) -> Self? {
        if bytes.count == 1, bytes[0] == IndexKey.absent { return .some(nil) }
        return Wrapped.read(indexKey: bytes).map { .some($0) }
    }
}

/// The readers of an attribute of type `V`, picked once for an aggregate.
enum TypedReaders<V> {
    /// A reader of `V` from a record's field, when `V` is one of the types read directly, or a `Decodable` type
    /// read through its conformance; `nil` otherwise (the aggregate decodes models).
    static func fieldReader() -> ((borrowing FieldReader, String) throws -> V?)? {
        if let readable = V.self as? any StoredFieldReadable.Type { return direct(readable) }
        guard let decodable = V.self as? any Decodable.Type else { return nil }
        return decoding(decodable)
    }

    // `T` is `V` in each of these: the existential opened into a generic parameter. `knownTypeCast` reinterprets a
    // value as its own type, where `as? V` would ask the runtime for every value.

    private static func direct<T: StoredFieldReadable>(_: T.Type) -> (borrowing FieldReader, String) throws -> V? {
        { fields, name in try T.read(from: fields, name: name).map { knownTypeCast($0, to: V.self) } }
    }

    private static func decoding<T: Decodable>(_: T.Type) -> (borrowing FieldReader, String) throws -> V? {
        { fields, name in
            if let value = try fields.decodeIfPresent(T.self, forKey: name) {
                return knownTypeCast(value, to: V.self)
            }
            // Missing or null: `nil` for an optional attribute, nothing otherwise.
            return (V.self as? any AnyOptional.Type).map { $0.none } as? V
        }
    }

    /// A reader of `V` from the whole key of an index on the attribute alone; `nil` when `V`'s keys do not read back.
    static func keyReader() -> ((BorrowedBytes) -> V?)? {
        guard let readable = V.self as? any IndexKeyReadable.Type else { return nil }
        return keyReader(readable)
    }

    private static func keyReader<T: IndexKeyReadable>(_: T.Type) -> (BorrowedBytes) -> V? {
        { bytes in T.read(indexKey: bytes).map { knownTypeCast($0, to: V.self) } }
    }
}
