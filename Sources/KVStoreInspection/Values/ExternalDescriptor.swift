import Foundation
import KVStore

/// What a record holds of an external value, `{"id": value UUID, "size": bytes, "chunkSize": bytes}`: which chunks
/// of the entity's `external/<Entity>` table hold it, and how big it is.
package struct ExternalDescriptor: Equatable {
    /// The value's ID, the third part of its chunks' keys.
    package let valueID: UUID
    /// The value's size in bytes.
    package let byteCount: Int
    /// The size of every chunk but the last, which holds the rest.
    package let chunkSize: Int

    /// The largest chunk import accepts: a chunk line holds one chunk, and the library writes 256 KiB ones.
    package static let largestChunk = 64 << 20

    /// How many chunks hold the value.
    package var chunkCount: Int {
        chunkSize > 0 ? byteCount / chunkSize + (byteCount % chunkSize == 0 ? 0 : 1) : 0
    }

    /// The size of chunk `index`.
    package func size(ofChunk index: Int) -> Int {
        index < chunkCount - 1 ? chunkSize : byteCount - (chunkCount - 1) * chunkSize
    }

    /// The descriptor a stored record holds, or `nil` when the value is not one (`check` reports it).
    package init?(_ value: RecordValue) {
        func integer(_ name: String) -> Int? {
            switch RecordIndexKeys.value(of: name, in: value) {
            case .int(let number): Int(exactly: number)
            case .uint(let number): Int(exactly: number)
            default: nil
            }
        }
        guard case .uuid(let valueID) = RecordIndexKeys.value(of: "id", in: value),
            let byteCount = integer("size"), let chunkSize = integer("chunkSize"), byteCount >= 0,
            chunkSize > 0 || byteCount == 0
        else { return nil }
        self.valueID = valueID
        self.byteCount = byteCount
        self.chunkSize = chunkSize
    }

    /// Reads a descriptor as the library writes it, strictly, for import: an object of exactly `id` (a UUID), `size`
    /// (an int, 0 or more) and `chunkSize` (an int from 1 to ``largestChunk``), with at most 2^32 chunks.
    ///
    /// - Throws: ``RecordJSONError`` saying what is wrong, with `field` as its path.
    package static func parse(_ value: RecordValue, field: String) throws(RecordJSONError) -> ExternalDescriptor {
        func bad(_ reason: String) -> RecordJSONError {
            RecordJSONError(path: field, reason: "an external value's descriptor \(reason)")
        }
        guard case .object(let entries) = value else {
            throw bad("must be an object {\"id\":{\"$uuid\":…},\"size\":…,\"chunkSize\":…}, not \(value.kind.typeName)")
        }
        let names = entries.map(\.name).sorted()
        guard names == ["chunkSize", "id", "size"] else {
            throw bad("has the members \(names.joined(separator: ", ")), not exactly id, size and chunkSize")
        }
        guard case .uuid(let valueID) = RecordIndexKeys.value(of: "id", in: value) else {
            throw bad("needs a UUID as its id ({\"$uuid\":\"…\"})")
        }
        guard case .int(let size) = RecordIndexKeys.value(of: "size", in: value), size >= 0 else {
            throw bad("needs an int of 0 or more as its size")
        }
        guard case .int(let chunkSize) = RecordIndexKeys.value(of: "chunkSize", in: value),
            chunkSize >= 1, chunkSize <= Int64(largestChunk)
        else { throw bad("needs an int from 1 to \(largestChunk) as its chunkSize") }
        let descriptor = ExternalDescriptor(valueID: valueID, byteCount: Int(size), chunkSize: Int(chunkSize))
        guard descriptor.chunkCount <= Int(UInt32.max) else { throw bad("names more than 2^32 chunks") }
        return descriptor
    }

    private init(valueID: UUID, byteCount: Int, chunkSize: Int) {
        self.valueID = valueID
        self.byteCount = byteCount
        self.chunkSize = chunkSize
    }
}
