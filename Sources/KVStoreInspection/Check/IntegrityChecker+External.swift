import Foundation
import KVStore
import LMDB

/// The consistency of external values: every descriptor's chunks are stored with the right sizes, and every chunk
/// belongs to a descriptor.
extension IntegrityChecker {
    /// A chunk key's parts: owner, field id, value ID and chunk number.
    static func chunkKeyParts(_ key: UnsafeRawBufferPointer) -> (owner: UUID, field: UInt32, value: UUID, chunk: Int)? {
        guard key.count == 40, let owner = RecordKey.uuid(UnsafeRawBufferPointer(rebasing: key[0..<16])),
            let value = RecordKey.uuid(UnsafeRawBufferPointer(rebasing: key[20..<36]))
        else { return nil }
        let field = UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
        let chunk = UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 36, as: UInt32.self))
        return (owner, field, value, Int(chunk))
    }

    /// The key prefix of a value's chunks.
    package static func chunkPrefix(owner: UUID, field: UInt32, value: UUID) -> [UInt8] {
        var prefix: [UInt8] = []
        withUnsafeBytes(of: owner.uuid) { prefix.append(contentsOf: $0) }
        withUnsafeBytes(of: field.bigEndian) { prefix.append(contentsOf: $0) }
        withUnsafeBytes(of: value.uuid) { prefix.append(contentsOf: $0) }
        return prefix
    }

    /// The writer a staging entry names, `.some(nil)` when the entry does not read, or `nil` when the value is not
    /// staged.
    private static func stagingWriter(
        _ valueKey: [UInt8], staging: Table, txn: borrowing Transaction
    ) throws -> StagingWriter?? {
        try txn.withUnsafeBytes(forKey: valueKey, in: staging) { bytes -> StagingWriter?? in
            bytes.map { StagingWriter(unsafe BorrowedBytes(unsafe: $0)) }
        }
    }

    /// Checks an entity's external values in both directions.
    func checkExternalValues(of checked: CheckedEntity) throws {
        let entity = checked.entity
        guard !entity.external.isEmpty else { return }
        let tableName = Catalog.externalTableName(entity.name)
        guard try store.tableNames().contains(tableName) else {
            problem(
                .error,
                "\(entity.name) keeps \(entity.external.map(\.name).joined(separator: ", ")) externally but "
                    + "has no table '\(tableName)'", entity: entity.name)
            return
        }
        let chunks = try store.environment.openTable(named: tableName)
        let checksumName = Catalog.checksumTableName(entity.name)
        let checksums =
            try store.tableNames().contains(checksumName) ? try store.environment.openTable(named: checksumName) : nil
        let isChecked = store.format.formatVersion >= 2
        if checksums == nil, isChecked {
            problem(
                .error, "\(entity.name) keeps values externally but has no table '\(checksumName)' of their checksums",
                entity: entity.name)
        }
        try checkDescriptors(of: checked, chunks: chunks)
        let stagingName = Catalog.stagingTableName(entity.name)
        let staging =
            try store.tableNames().contains(stagingName) ? try store.environment.openTable(named: stagingName) : nil
        try checkChunkOwners(
            of: checked, chunks: chunks, checksums: checksums, isChecked: isChecked, staging: staging,
            probe: staging == nil ? nil : try StoreLockProbe(directory: store.path))
        if let checksums { try checkChecksumOwners(of: checked, checksums: checksums, chunks: chunks) }
    }

    /// Checks that every checksum entry has its chunk.
    private func checkChecksumOwners(of checked: CheckedEntity, checksums: Table, chunks: Table) throws {
        let entity = checked.entity
        try walk(checksums, label: "\(entity.name) chunk checksums") { txn, key, value in
            guard try !txn.containsKey(key, in: chunks) else { return }
            let parts = Self.chunkKeyParts(key)
            problem(
                .error,
                "\(entity.name): a checksum without its chunk (\(parts.map { "chunk \($0.chunk) of value \($0.value) of \($0.owner)" } ?? "a key of \(key.count) bytes"))",
                entity: entity.name, id: parts?.owner)
        }
    }

    /// Checks that the chunks of every descriptor are stored, each of the right size.
    private func checkDescriptors(of checked: CheckedEntity, chunks: Table) throws {
        let entity = checked.entity
        try walk(checked.records, label: "\(entity.name) external values") { txn, key, value in
            guard let id = RecordKey.uuid(key),
                let record = try? RecordValue.decode(from: unsafe BorrowedBytes(unsafe: value), fields: entity.fields)
            else { return }  // Reported by the record check.
            for field in entity.external {
                let stored = RecordIndexKeys.value(of: field.name, in: record)
                let label = "\(entity.name) \(id): the external \(field.name)"
                guard let descriptor = ExternalDescriptor(stored) else {
                    if case .null = stored { continue }  // A record written before the field existed.
                    problem(.error, "\(label) holds no valid descriptor", entity: entity.name, id: id, part: field.name)
                    continue
                }
                var next = 0
                var damage: String?
                let prefix = Self.chunkPrefix(owner: id, field: field.fieldID, value: descriptor.valueID)
                try txn.scan(chunks, in: .prefix(prefix)) { key, chunk in
                    let index = Self.chunkKeyParts(key)?.chunk ?? -1
                    guard index < descriptor.chunkCount else { return false }  // An orphan, reported by the chunk walk.
                    if index != next {
                        damage = "chunk \(next) of \(descriptor.chunkCount) is missing"
                        return false
                    }
                    if chunk.count != descriptor.size(ofChunk: index) {
                        damage =
                            "chunk \(index) holds \(chunk.count) bytes instead of \(descriptor.size(ofChunk: index))"
                        return false
                    }
                    next += 1
                    return true
                }
                if damage == nil, next < descriptor.chunkCount {
                    damage = "chunk \(next) of \(descriptor.chunkCount) is missing"
                }
                if let damage {
                    problem(
                        .error, "\(label) (\(descriptor.byteCount) bytes): \(damage)", entity: entity.name, id: id,
                        part: field.name)
                }
            }
        }
    }

    /// Checks that every chunk belongs to a descriptor: a record of the entity whose external field holds the
    /// chunk's value, with fewer chunks than the chunk's number. Chunks of a value that belongs to nothing are
    /// reported once per value.
    private func checkChunkOwners(
        of checked: CheckedEntity, chunks: Table, checksums: Table?, isChecked: Bool, staging: Table?,
        probe: StoreLockProbe?
    ) throws {
        let entity = checked.entity
        let names = Dictionary(entity.external.map { ($0.fieldID, $0.name) }, uniquingKeysWith: { first, _ in first })
        var lastOrphan: [UInt8]?
        var owner: (id: UUID, record: RecordValue?)?
        try walk(chunks, label: "\(entity.name) chunks") { txn, key, chunk in
            guard let parts = Self.chunkKeyParts(key) else {
                problem(.error, "\(entity.name): a chunk key of \(key.count) bytes is malformed", entity: entity.name)
                return
            }
            if owner?.id != parts.owner {
                let record = try withUnsafeBytes(of: parts.owner.uuid) { ownerKey in
                    try txn.withUnsafeBytes(forKey: ownerKey, in: checked.records) { bytes in
                        try bytes.map {
                            try RecordValue.decode(from: unsafe BorrowedBytes(unsafe: $0), fields: entity.fields)
                        }
                    }
                }
                owner = (parts.owner, record)
            }
            let valueKey = Self.chunkPrefix(owner: parts.owner, field: parts.field, value: parts.value)
            guard lastOrphan != valueKey else { return }
            let reason: String?
            if let name = names[parts.field] {
                let descriptor = owner?.record.flatMap { ExternalDescriptor(RecordIndexKeys.value(of: name, in: $0)) }
                if owner?.record == nil {
                    reason = "its model does not exist"
                } else if descriptor?.valueID != parts.value {
                    reason = "\(name) holds another value"
                } else if let descriptor, parts.chunk >= descriptor.chunkCount {
                    reason = "\(name) has only \(descriptor.chunkCount) chunks"
                } else {
                    reason = nil
                }
            } else {
                reason = "field id \(parts.field) is not an external field of \(entity.name)"
            }
            guard let reason else {
                // A chunk of a value that belongs to a record must carry its checksum.
                let checksum = try checksums.flatMap { try txn.value(forKey: key, in: $0) }
                if let checksum,
                    !checksum.elementsEqual(
                        withUnsafeBytes(
                            of: Checksum.crc32c(unsafe BorrowedBytes(unsafe: chunk)).littleEndian, Array.init))
                {
                    problem(
                        .error,
                        "\(entity.name) \(parts.owner): chunk \(parts.chunk) of the external value \(parts.value) is "
                            + "damaged: its checksum does not match its bytes", entity: entity.name, id: parts.owner,
                        part: names[parts.field])
                } else if checksum == nil, isChecked {
                    problem(
                        .error,
                        "\(entity.name) \(parts.owner): chunk \(parts.chunk) of the external value \(parts.value) has no "
                            + "checksum", entity: entity.name, id: parts.owner, part: names[parts.field])
                }
                return
            }
            lastOrphan = valueKey
            // The chunks of a value that the staging table lists belong to a write under way over several
            // transactions (a program's streamed value, an import's large one), or to one whose writer died: a warning,
            // since the next open of the entity by a program, or `kvtool import --resume`, deletes the latter, and
            // nothing reads them meanwhile.
            if let staging, let probe, let writer = try Self.stagingWriter(valueKey, staging: staging, txn: txn) {
                let running = try writer.map { try $0.isInFlight(probe: probe) } ?? false
                problem(
                    .warning,
                    "\(entity.name) \(parts.owner): staged chunks of the external value \(parts.value) of "
                        + (names[parts.field] ?? "field id \(parts.field)")
                        + (running
                            ? ", which a writer is writing"
                            : ", whose writer stopped; the next open of \(entity.name) by a program, or 'kvtool import "
                                + "--resume', deletes them"),
                    entity: entity.name, id: parts.owner, part: names[parts.field])
                return
            }
            problem(
                .error,
                "\(entity.name) \(parts.owner): orphan chunks of the external value \(parts.value) from chunk "
                    + "\(parts.chunk): \(reason)", entity: entity.name, id: parts.owner, part: names[parts.field])
        }
    }
}
