import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// What `--on-conflict` asks for when a record of the file has the ID, or a unique value, of a stored record.
enum ConflictPolicy: String, CaseIterable, Sendable {
    /// The import is invalid: nothing is written.
    case fail
    /// The record replaces the stored one with its ID. A unique value held by another stored record is still a
    /// conflict: replacing that record would mean deleting it, which its delete rules govern.
    case replace
    /// The stored record stays and the file's is not written.
    case skip
}

/// What the validation pass found: the problems, and what the write pass needs.
struct ImportValidation {
    /// The problems, each with its line.
    var problems: ImportProblems
    /// The schema the records were checked against.
    let schema: ImportSchema
    /// The scratch store, with each record's disposition.
    let scratch: ImportScratch
    /// The record lines of each entity.
    var recordCounts: [String: Int]
    /// The delete lines of each entity.
    var deleteCounts: [String: Int]
    /// The conflict policy the records were checked with: the one given, or for an incremental export `replace`.
    var policy: ConflictPolicy
    /// The lines read, the bytes read, and their fingerprint.
    var lines: Int
    var bytes: Int
    var fingerprint: String
    /// Records by disposition, from the resume point on.
    var dispositions: [ImportScratch.Disposition: Int]
}

/// The first pass of an import: every line checked against the store's schema (or the export's catalog, for the
/// entities the store lacks), with nothing written to the store.
///
/// It reads the input once, a chunk of lines per short read transaction of the store, and keeps what must outlive a
/// line in an ``ImportScratch`` rather than in memory. Each line must be well-formed JSON without a member named
/// twice; a record must belong to an entity of the store or of the export's catalog, hold its ID as its `id`, hold
/// only fields those catalogs name, with the kind the catalog records for each top-level field, and well-formed
/// descriptors in its external fields, followed by every chunk they name, of the right size; its ID must not appear
/// twice; its unique values must not collide within the file, nor with the store's but as `--on-conflict` allows; its
/// references through relationships that do not allow dangling IDs must name records of the file or of the store;
/// and the fields every record of the entity has (see ``requiredFields``) must not be missing.
///
/// Delete lines (an incremental export's) come before the records; their ID must not appear twice either, a unique
/// value of a record they delete is free for the records after them, no record may reference one, and no stored
/// record that the input leaves as it is may reference one through a relationship that does not allow dangling IDs:
/// import applies no delete rules (the source's cascades and nullifications travel as changes of their own).
final class ImportValidator {
    /// A record's external value that the next lines must hold, chunk by chunk.
    private struct ExpectedValue {
        let field: String
        let fieldID: UInt32
        let descriptor: ExternalDescriptor
        var next = 0
        /// Whether the chunks must equal the stored value's: the record replaces a stored one whose value has the
        /// same value ID, so the write pass leaves those chunks as they are.
        var matchesStored = false
    }

    /// The chunk lines a record line calls for.
    private struct ExpectedChunks {
        let entity: ImportEntity
        let id: UUID
        let line: Int
        var values: [ExpectedValue]
    }

    /// Records of an entity that lack a field.
    private struct Missing {
        var count = 0
        var first: [(line: Int, id: UUID)] = []
    }

    /// The tables of a stored entity that lookups read.
    private struct StoredTables {
        let records: Table
        let unique: [Int: Table]
        let chunks: Table?
        /// For each reference field of the entity, a ready index on that field alone, through which the records
        /// that reference a deleted record are found.
        let referenceIndexes: [String: Table]
    }

    private let store: InspectedStore?
    /// The policy given, or `nil` for the default.
    private let givenPolicy: ConflictPolicy?
    /// The policy the records are checked with: known once the header is read.
    private var policy: ConflictPolicy = .fail
    /// The seed of ``scratchKey(_:whole:)``'s second hash.
    private let scratchSeed = UInt64.random(in: 1...UInt64.max)
    /// The first line the import that this one resumes did not commit; 1 for a new import.
    private let resumeLine: Int
    private let chunkSize: Int
    private let scratchParent: String
    private var problems: ImportProblems
    private var lineNumber = 0
    private var heldLine: (number: Int, line: ImportLine)?
    private var needsEvidence: String?
    private var headerLine: Int?
    private var end: (line: Int, value: ExportEnd)?
    private var linesAfterEnd = 0
    private var expected: ExpectedChunks?
    /// The record whose chunk lines are skipped after one of them was wrong, so that one mistake is one problem.
    private var skippingChunksOf: UUID?
    private var recordCounts: [String: Int] = [:]
    private var deleteCounts: [String: Int] = [:]
    /// The first record line, after which a delete line is out of place.
    private var firstRecordLine: Int?
    /// The entities of which a delete line deletes a stored record.
    private var deletedEntities: Set<String> = []
    private var chunkCounts: [String: Int] = [:]
    private var missing: [String: [String: Missing]] = [:]
    /// The fields every stored record of an entity has; `nil` inside when it has no stored record.
    private var storedEvidence: [String: Set<String>?] = [:]
    /// The fields of each entity that may turn out required, whose absence is counted (known once its evidence is).
    private var requiredCandidates: [String: [String]] = [:]
    private var underivableReported: Set<String> = []
    private var dispositions: [ImportScratch.Disposition: Int] = [:]
    private var tables: [String: StoredTables] = [:]

    /// Prepares a validation.
    ///
    /// - Parameters:
    ///   - store: The store, or `nil` when the import creates it.
    ///   - policy: What to do with conflicts, or `nil` for the default: `fail`, and for an incremental export
    ///     `replace`, which is the only policy it takes.
    ///   - resumeLine: The line an interrupted import stopped at, whose earlier lines are in the store already; they
    ///     are checked within the file (duplicate IDs and unique values, references to them) but not against the
    ///     store. 1 for a new import.
    ///   - chunkSize: Lines per read transaction of the store.
    ///   - scratchParent: The directory to make the scratch store in.
    ///   - problemLimit: How many problems the report lists.
    init(
        store: InspectedStore?, policy: ConflictPolicy?, resumeLine: Int, chunkSize: Int, scratchParent: String,
        problemLimit: Int = 100
    ) {
        self.store = store
        givenPolicy = policy
        self.resumeLine = resumeLine
        self.chunkSize = chunkSize
        self.scratchParent = scratchParent
        problems = ImportProblems(limit: problemLimit)
    }

    /// Reads the whole input and checks every line.
    ///
    /// - Throws: ``ToolError`` when the input cannot be read, the scratch store cannot be made, or a stored table is
    ///   missing; ``UsageError`` for an incremental export with another `--on-conflict` than `replace`; what LMDB
    ///   throws. Problems of the input are in the result, not thrown.
    func run(_ reader: LineReader, progress: Progress) throws -> ImportValidation {
        let header = try readHeader(reader)
        if let since = header?.since {
            if store?.entities.isEmpty ?? true {
                let target =
                    store.map { "the store at '\($0.path)' has no entities, and" } ?? "where there is no store, it"
                throw ToolError(
                    "The input is an incremental export (the changes after history token \(since)), which applies to "
                        + "a copy of its source: \(target) would hold only the records changed since. Import a full "
                        + "export of the source first, then the changes after the token its header records")
            }
            if let givenPolicy, givenPolicy != .replace {
                throw UsageError(
                    "The input is an incremental export (the changes after history token \(since)): it replaces the "
                        + "stored records it changes, so it imports with --on-conflict replace (its default), not "
                        + givenPolicy.rawValue)
            }
            policy = .replace
        } else {
            policy = givenPolicy ?? .fail
        }
        let schema = ImportSchema(
            stored: store?.entities ?? [], storedSchema: store?.schema ?? SchemaState(), header: header)
        for problem in schema.problems { problems.add(line: headerLine ?? 1, problem) }
        let scratch = try ImportScratch(in: scratchParent, schema: schema)
        try openTables(schema)
        var more = true
        while more {
            more = try scratch.environment.write { scratchTxn -> Bool in
                if let store {
                    return try store.environment.read { txn in
                        try validateChunk(reader, schema, scratch, scratchTxn, txn)
                    }
                }
                return try validateChunk(reader, schema, scratch, scratchTxn, scratchTxn)
            }
            // The pages the chunk read through the memory maps stay resident until given back (when more follows).
            if more {
                try store?.environment.releaseMappedPages()
                try scratch.environment.releaseMappedPages()
            }
            if let name = needsEvidence, let entity = schema[name] {
                needsEvidence = nil
                storedEvidence[name] = .some(try fieldsOfEveryStoredRecord(entity))
            }
            progress.update("import: checking line \(Formatting.grouped(lineNumber))")
        }
        try finish(schema, scratch)
        try checkStoredReferrers(schema, scratch)
        return ImportValidation(
            problems: problems, schema: schema, scratch: scratch, recordCounts: recordCounts,
            deleteCounts: deleteCounts, policy: policy, lines: lineNumber, bytes: reader.offset,
            fingerprint: reader.fingerprint, dispositions: dispositions)
    }

    // MARK: - Lines

    /// Reads lines up to the first that is not blank: the header, which is kept, or another line, held for the loop.
    private func readHeader(_ reader: LineReader) throws -> ExportHeader? {
        while let bytes = try reader.nextLine() {
            lineNumber += 1
            if Self.isBlank(bytes) { continue }
            do throws(ToolError) {
                let line = try ImportLine.parse(bytes)
                if case .header(let header) = line {
                    headerLine = lineNumber
                    return header
                }
                heldLine = (lineNumber, line)
            } catch {
                problems.add(line: lineNumber, error.message)
                // A header that does not read leaves the input without the catalog it needs.
                if bytes.starts(with: Array(#"{"\#(ExportHeader.marker)""#.utf8)) { headerLine = lineNumber }
            }
            return nil
        }
        return nil
    }

    private static func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    /// Checks up to ``chunkSize`` lines; returns whether the input goes on.
    private func validateChunk(
        _ reader: LineReader, _ schema: ImportSchema, _ scratch: ImportScratch, _ scratchTxn: borrowing Transaction,
        _ txn: borrowing Transaction
    ) throws -> Bool {
        var checked = 0
        while checked < chunkSize {
            let number: Int
            let line: ImportLine
            if let held = heldLine {
                heldLine = nil
                (number, line) = held
            } else {
                guard let bytes = try reader.nextLine() else { return false }
                lineNumber += 1
                if Self.isBlank(bytes) { continue }
                do throws(ToolError) {
                    line = try ImportLine.parse(bytes)
                    number = lineNumber
                } catch {
                    problems.add(line: lineNumber, error.message)
                    if let expected {
                        // The line may have been one of its chunks: the rest would each be out of order.
                        skippingChunksOf = expected.id
                        self.expected = nil
                    }
                    checked += 1
                    continue
                }
            }
            if case .record(let record) = line, let entity = schema[record.entity], needsStoredEvidence(entity) {
                heldLine = (number, line)
                needsEvidence = entity.name
                return true
            }
            try check(line, number: number, schema, scratch, scratchTxn, txn)
            checked += 1
        }
        return true
    }

    private func check(
        _ line: ImportLine, number: Int, _ schema: ImportSchema, _ scratch: ImportScratch,
        _ scratchTxn: borrowing Transaction, _ txn: borrowing Transaction
    ) throws {
        if end != nil {
            linesAfterEnd += 1
            if linesAfterEnd == 1 { problems.add(line: number, "a line after the export's end line") }
            return
        }
        if case .chunk(let chunk) = line {
            try checkChunk(chunk, number: number, txn)
            return
        }
        closeExpected(before: number)
        skippingChunksOf = nil
        switch line {
        case .header:
            if number != headerLine {
                problems.add(line: number, "a header line that is not the first line")
            }
        case .end(let value):
            end = (number, value)
            checkCounts(value, number: number, schema)
        case .record(let record):
            try checkRecord(record, number: number, schema, scratch, scratchTxn, txn)
        case .delete(let delete):
            try checkDelete(delete, number: number, schema, scratch, scratchTxn, txn)
        case .chunk:
            break
        }
    }

    /// Reports the chunk lines a record called for and did not get before line `number`.
    private func closeExpected(before number: Int) {
        guard let expected, let value = expected.values.first else { return }
        problems.add(
            line: number,
            "expected chunk \(value.next) of \(expected.entity.name).\(value.field) of \(expected.id) (the record at "
                + "line \(expected.line) holds a value of \(value.descriptor.chunkCount) chunks), not this line")
        self.expected = nil
    }

    // MARK: - Records

    private func checkRecord(
        _ line: ImportLine.RecordLine, number: Int, _ schema: ImportSchema, _ scratch: ImportScratch,
        _ scratchTxn: borrowing Transaction, _ txn: borrowing Transaction
    ) throws {
        guard let entity = schema[line.entity] else {
            unknownEntity(line.entity, number: number, schema)
            return
        }
        recordCounts[entity.name, default: 0] += 1
        if firstRecordLine == nil { firstRecordLine = number }
        let label = "\(entity.name) \(line.id)"
        checkDerivable(entity, number: number)
        let record: RecordValue
        do throws(ToolError) {
            record = try entity.record(from: line)
        } catch {
            problems.add(line: number, error.message)
            return
        }
        var fieldProblems = 0
        func fieldProblem(_ message: String) {
            fieldProblems += 1
            if fieldProblems <= 5 { problems.add(line: number, "\(label): \(message)") }
        }
        var unknown: [String] = []
        if entity.knowsFields { Self.unknownNames(in: record, entity: entity, path: "", into: &unknown) }
        for name in unknown {
            fieldProblem(
                "unknown field '\(name)': neither the store's nor the export's catalog of \(entity.name) names it")
        }
        var values: [ExpectedValue] = []
        var present: Set<String> = []
        if case .object(let entries) = record {
            for entry in entries where entry.value != .null {
                present.insert(entry.name)
                if let kind = entity.kinds[entry.name], entry.value.kind != kind,
                    !(entry.value.kind.isBool && kind.isBool)
                {
                    fieldProblem(
                        "field '\(entry.name)' holds \(Self.article(entry.value.kind.typeName)), but "
                            + "\(entity.name).\(entry.name) holds \(kind.typeName) values (the catalog's kind)")
                }
                if let fieldID = entity.external[entry.name] {
                    do throws(RecordJSONError) {
                        let descriptor = try ExternalDescriptor.parse(entry.value, field: entry.name)
                        if descriptor.chunkCount > 0 {
                            values.append(ExpectedValue(field: entry.name, fieldID: fieldID, descriptor: descriptor))
                        }
                    } catch {
                        fieldProblem(error.description)
                    }
                }
            }
        }
        noteMissing(entity, present: present, line: number, id: line.id)
        let disposition = try checkIdentity(
            entity, line.id, record: record, number: number, label: label, scratch, scratchTxn, txn)
        if let disposition {
            dispositions[disposition, default: 0] += number >= resumeLine ? 1 : 0
            if disposition == .replaces, !values.isEmpty {
                try markStoredValues(&values, of: entity, id: line.id, txn)
            }
        }
        if !values.isEmpty { expected = ExpectedChunks(entity: entity, id: line.id, line: number, values: values) }
        if number >= resumeLine {
            try checkReferences(
                entity, line.id, record: record, number: number, label: label, schema, scratch,
                scratchTxn, txn)
        }
    }

    /// Reports a line of an entity that neither the store nor the export's catalog has.
    private func unknownEntity(_ name: String, number: Int, _ schema: ImportSchema) {
        let known = schema.names.joined(separator: ", ")
        problems.add(
            line: number,
            "unknown entity '\(name)' (the store\(schema.header == nil ? " has" : " and the export's catalog have") "
                + "\(known.isEmpty ? "none" : known))")
    }

    /// Reports, once per entity, an index that only a program declaring it can maintain, when the import writes or
    /// deletes a record of its entity.
    private func checkDerivable(_ entity: ImportEntity, number: Int) {
        guard let index = entity.underivableIndex, underivableReported.insert(entity.name).inserted else { return }
        problems.add(
            line: number,
            "\(entity.name)'s index \(index.name) has a key encoding of its own that only a program declaring it "
                + "computes; kvtool cannot maintain it: write \(entity.name) through the program")
    }

    // MARK: - Deletes

    /// Checks a delete line, and records what the import does with it: deletes a stored record, or nothing.
    private func checkDelete(
        _ line: ImportLine.DeleteLine, number: Int, _ schema: ImportSchema, _ scratch: ImportScratch,
        _ scratchTxn: borrowing Transaction, _ txn: borrowing Transaction
    ) throws {
        if let first = firstRecordLine {
            problems.add(
                line: number,
                "a delete line after the record at line \(first): delete lines come before the records (as 'kvtool "
                    + "export --since' writes them), so that what they free is known when the records are checked")
            return
        }
        guard let entity = schema[line.entity] else {
            unknownEntity(line.entity, number: number, schema)
            return
        }
        deleteCounts[entity.name, default: 0] += 1
        if let earlier = try scratch.record(entity.ordinal, line.id, in: scratchTxn) {
            problems.add(
                line: number,
                "\(entity.name) \(line.id): the ID appears twice in the input, also at line \(earlier.line)")
            return
        }
        // A line before the resume point was committed: its record is gone.
        let disposition: ImportScratch.Disposition =
            try number >= resumeLine && storeHas(entity, line.id, txn) ? .deletes : .absent
        if disposition == .deletes {
            deletedEntities.insert(entity.name)
            checkDerivable(entity, number: number)
        }
        dispositions[disposition, default: 0] += number >= resumeLine ? 1 : 0
        try scratch.setRecord(entity.ordinal, line.id, line: number, disposition, in: scratchTxn)
    }

    /// Checks that no stored record that the input leaves as it is references a record a delete line deletes,
    /// through a relationship that does not allow dangling references: such a record would be left dangling, since
    /// import applies no delete rules. The referring records are found through a ready index on the reference's field,
    /// or else by reading the referring entity's records.
    private func checkStoredReferrers(_ schema: ImportSchema, _ scratch: ImportScratch) throws {
        guard let store, !deletedEntities.isEmpty else { return }
        for source in schema.names.compactMap({ schema[$0] }) where !source.isNew {
            for reference in source.references where deletedEntities.contains(reference.target) {
                guard let target = schema[reference.target], let tables = tables[source.name] else { continue }
                if let index = tables.referenceIndexes[reference.field] {
                    try store.environment.read { txn in
                        try scratch.environment.read { scratchTxn in
                            try scratch.forEachRecord(of: target.ordinal, in: scratchTxn) { id, line, disposition in
                                guard disposition == .deletes else { return }
                                let key = try RecordIndexKeys.key(for: [.uuid(id)], fields: [reference.field])
                                for referrer in try RecordKey.ids(forKey: key, in: index, txn: txn) {
                                    try checkReferrer(
                                        referrer, of: source, reference, deleted: (target, id, line), scratch,
                                        scratchTxn)
                                }
                            }
                        }
                    }
                } else {
                    var scan = ChunkedScan(
                        environment: store.environment, table: tables.records, chunkSize: CommonOptions.readChunkSize)
                    try scratch.environment.read { scratchTxn in
                        try scan.forEach { _, key, value in
                            guard let referrer = RecordKey.uuid(key) else { return true }
                            let record = try RecordKey.decode(value, id: referrer, entity: source.catalog)
                            let (ids, _) = RelationshipPath.storedIDs(
                                RecordIndexKeys.value(of: reference.field, in: record))
                            for id in ids {
                                guard let found = try scratch.record(target.ordinal, id, in: scratchTxn),
                                    found.1 == .deletes
                                else { continue }
                                try checkReferrer(
                                    referrer, of: source, reference, deleted: (target, id, found.line), scratch,
                                    scratchTxn)
                            }
                            return true
                        }
                    }
                }
            }
        }
    }

    /// Reports a stored record that references a deleted one, unless the input replaces it (its new references are
    /// checked with its line) or deletes it too.
    private func checkReferrer(
        _ referrer: UUID, of source: ImportEntity, _ reference: ImportEntity.Reference,
        deleted: (entity: ImportEntity, id: UUID, line: Int), _ scratch: ImportScratch,
        _ scratchTxn: borrowing Transaction
    ) throws {
        if let found = try scratch.record(source.ordinal, referrer, in: scratchTxn),
            found.1 == .replaces || found.1 == .deletes
        {
            return
        }
        problems.add(
            line: deleted.line,
            "\(deleted.entity.name) \(deleted.id): deleted, but the stored \(source.name) \(referrer), which the input "
                + "neither replaces nor deletes, references it through \(reference.field) (relationship "
                + "\(reference.relationship) does not allow dangling references). Import applies no delete rules (an "
                + "incremental export carries the source's cascades and nullifications as changes of their own): "
                + "the store holds changes its source did not make. Make a new copy from a full export")
    }

    /// The names in a record that the entity's catalogs do not know: member names of objects at any depth (not the
    /// keys of dictionaries, which are data, nor inside external values' descriptors, which the library writes).
    private static func unknownNames(
        in value: RecordValue, entity: ImportEntity, path: String, into names: inout [String]
    ) {
        switch value {
        case .object(let entries):
            for entry in entries {
                let entryPath = path.isEmpty ? entry.name : "\(path).\(entry.name)"
                if !entity.knownNames.contains(entry.name) { names.append(entryPath) }
                if path.isEmpty && entity.external[entry.name] != nil { continue }
                unknownNames(in: entry.value, entity: entity, path: entryPath, into: &names)
            }
        case .array(let elements):
            for (offset, element) in elements.enumerated() {
                unknownNames(in: element, entity: entity, path: "\(path)[\(offset)]", into: &names)
            }
        case .stringMap(let entries):
            for entry in entries {
                unknownNames(in: entry.value, entity: entity, path: "\(path)[\(entry.key)]", into: &names)
            }
        case .intMap(let entries):
            for entry in entries {
                unknownNames(in: entry.value, entity: entity, path: "\(path)[\(entry.key)]", into: &names)
            }
        default:
            break
        }
    }

    /// Checks the record's ID and unique values against the file and the store, and records what the import does
    /// with the record; `nil` when its ID appeared before.
    private func checkIdentity(
        _ entity: ImportEntity, _ id: UUID, record: RecordValue, number: Int, label: String,
        _ scratch: ImportScratch, _ scratchTxn: borrowing Transaction, _ txn: borrowing Transaction
    ) throws -> ImportScratch.Disposition? {
        if let earlier = try scratch.record(entity.ordinal, id, in: scratchTxn) {
            problems.add(line: number, "\(label): the ID appears twice in the input, also at line \(earlier.line)")
            return nil
        }
        let isResumed = number < resumeLine
        let isStored = try storeHas(entity, id, txn)
        var disposition: ImportScratch.Disposition
        if isResumed {
            disposition = isStored ? .committed : .skipped
        } else if isStored {
            switch policy {
            case .fail:
                problems.add(
                    line: number,
                    "\(label): the store already has a record with this ID (--on-conflict fail, the default; "
                        + "replace or skip decide otherwise)")
                disposition = .written
            case .replace: disposition = .replaces
            case .skip: disposition = .keepsStored
            }
        } else {
            disposition = .written
        }
        for (position, index) in entity.uniqueIndexes {
            let wholes: [[UInt8]]
            do {
                wholes = try RecordIndexKeys.wholeKeys(of: record, in: index)
            } catch {
                problems.add(line: number, "\(label): cannot be indexed in \(index.name): \(error)")
                continue
            }
            guard let table = scratch.uniqueTable(entity: entity.ordinal, position: position) else { continue }
            let values = index.fields.map {
                RecordJSON.defaultJSON(RecordIndexKeys.value(of: $0, in: record)).serialized()
            }
            let described = "\(index.fields.joined(separator: ", ")) \(values.joined(separator: ", "))"
            for whole in wholes {
                let key = IndexKey.finalized(whole, hash: longKeyHash)
                if let owner = try scratch.uniqueOwner(scratchKey(key, whole: whole), in: table, txn: scratchTxn),
                    owner.0 != id
                {
                    problems.add(
                        line: number,
                        "\(label): \(described) is also the value of \(entity.name) \(owner.0) at line \(owner.line) "
                            + "(unique index \(index.name))")
                    continue
                }
                try scratch.setUniqueOwner(
                    scratchKey(key, whole: whole), id: id, line: number, in: table, txn: scratchTxn)
                guard !isResumed, disposition != .keepsStored,
                    let holder = try storedUniqueHolder(entity, position: position, key: key, whole: whole, txn),
                    holder != id
                else { continue }
                if policy == .skip {
                    disposition = isStored ? .keepsStored : .skipped
                } else if let replaced = try scratch.record(entity.ordinal, holder, in: scratchTxn),
                    replaced.1 == .replaces || replaced.1 == .deletes
                {
                    // An earlier line replaces the holder with another value (the same one would have collided
                    // within the file), or deletes it, which frees this one.
                    continue
                } else {
                    let hint =
                        policy == .replace
                        ? "; --on-conflict replace replaces the record with the same ID and never deletes another "
                            + "one (its delete rules would apply): delete it first, or replace it on an earlier line"
                        : ""
                    problems.add(
                        line: number,
                        "\(label): \(described) is already used by the stored \(entity.name) \(holder) (unique index "
                            + "\(index.name))\(hint)")
                }
            }
        }
        try scratch.setRecord(entity.ordinal, id, line: number, disposition, in: scratchTxn)
        return disposition
    }

    /// Marks the values whose chunks must equal the stored record's: those with the same value ID.
    private func markStoredValues(
        _ values: inout [ExpectedValue], of entity: ImportEntity, id: UUID, _ txn: borrowing Transaction
    ) throws {
        guard let table = tables[entity.name]?.records else { return }
        let stored = try RecordKey.record(id, of: entity.catalog, in: table, txn: txn)
        guard let stored else { return }
        for index in values.indices {
            let old = ExternalDescriptor(RecordIndexKeys.value(of: values[index].field, in: stored))
            values[index].matchesStored = old?.valueID == values[index].descriptor.valueID
        }
    }

    /// Checks that the record's references resolve: to a record of the file (now or at the end) or of the store.
    private func checkReferences(
        _ entity: ImportEntity, _ id: UUID, record: RecordValue, number: Int, label: String, _ schema: ImportSchema,
        _ scratch: ImportScratch, _ scratchTxn: borrowing Transaction, _ txn: borrowing Transaction
    ) throws {
        for (position, reference) in entity.references.enumerated() {
            guard let target = schema[reference.target] else { continue }
            let (ids, invalid) = RelationshipPath.storedIDs(RecordIndexKeys.value(of: reference.field, in: record))
            if let bad = invalid.first {
                problems.add(
                    line: number,
                    "\(label): \(reference.field) holds \(RecordJSON.defaultJSON(bad).serialized()), not the ID of a "
                        + "\(target.name) (relationship \(reference.relationship))")
            }
            for targetID in ids {
                if let found = try scratch.record(target.ordinal, targetID, in: scratchTxn) {
                    if found.1.isDelete {
                        problems.add(
                            line: number,
                            "\(label): \(reference.field) references \(target.name) \(targetID), which line "
                                + "\(found.line) deletes (relationship \(reference.relationship) does not allow "
                                + "dangling references)")
                    } else if !found.1.isStored {
                        problems.add(
                            line: number,
                            "\(label): \(reference.field) references \(target.name) \(targetID), which this import "
                                + "skips (line \(found.line): a unique value of it is a stored record's)")
                    }
                    continue
                }
                if try storeHas(target, targetID, txn) { continue }
                try scratch.keep(
                    ImportScratch.PendingReference(
                        target: target.ordinal, id: targetID, line: number, source: entity.ordinal, sourceID: id,
                        reference: position), in: scratchTxn)
            }
        }
    }

    // MARK: - Chunks

    private func checkChunk(_ chunk: ImportLine.ChunkLine, number: Int, _ txn: borrowing Transaction) throws {
        guard var expected, var value = expected.values.first else {
            if skippingChunksOf == chunk.id { return }
            problems.add(
                line: number,
                "a chunk of \(chunk.entity).\(chunk.field) of \(chunk.id) that no record before it calls for: a "
                    + "record's chunk lines follow it, in the order of its fields")
            skippingChunksOf = chunk.id
            return
        }
        let label = "\(expected.entity.name).\(value.field) of \(expected.id)"
        guard chunk.entity == expected.entity.name, chunk.id == expected.id, chunk.field == value.field,
            chunk.index == value.next
        else {
            problems.add(
                line: number,
                "expected chunk \(value.next) of \(label) (the record at line \(expected.line)), found chunk "
                    + "\(chunk.index) of \(chunk.entity).\(chunk.field) of \(chunk.id)")
            self.expected = nil
            skippingChunksOf = expected.id
            return
        }
        let size = value.descriptor.size(ofChunk: chunk.index)
        if chunk.data.count != size {
            problems.add(
                line: number,
                "chunk \(chunk.index) of \(label) holds \(chunk.data.count) bytes; its descriptor (\(value.descriptor.byteCount) "
                    + "bytes in chunks of \(value.descriptor.chunkSize)) makes it \(size)")
        } else if value.matchesStored, let chunks = tables[expected.entity.name]?.chunks {
            let key = CatalogExternalValues.chunkKey(
                owner: expected.id, field: value.fieldID, value: value.descriptor.valueID, chunk: chunk.index)
            let same = try txn.withUnsafeBytes(forKey: key, in: chunks) { bytes in
                bytes.map { chunk.data.elementsEqual($0) } ?? false
            }
            if !same {
                problems.add(
                    line: number,
                    "chunk \(chunk.index) of \(label) differs from the stored value with the same value ID "
                        + "\(value.descriptor.valueID): a changed value needs a new value ID")
            }
        }
        chunkCounts[expected.entity.name, default: 0] += 1
        value.next += 1
        if value.next == value.descriptor.chunkCount {
            expected.values.removeFirst()
        } else {
            expected.values[0] = value
        }
        self.expected = expected.values.isEmpty ? nil : expected
    }

    // MARK: - The end

    private func checkCounts(_ end: ExportEnd, number: Int, _ schema: ImportSchema) {
        guard schema.header != nil else {
            problems.add(line: number, "an end line without the export's header line")
            return
        }
        var names = Set(recordCounts.keys)
        for entity in end.entities {
            names.remove(entity.name)
            let records = recordCounts[entity.name] ?? 0
            let chunks = chunkCounts[entity.name] ?? 0
            if records != entity.records || chunks != entity.chunks {
                problems.add(
                    line: number,
                    "the end line counts \(Formatting.count(entity.records, "record")) and "
                        + "\(Formatting.count(entity.chunks, "chunk")) of \(entity.name), and the input has "
                        + "\(Formatting.grouped(records)) and \(Formatting.grouped(chunks)): lines were lost or added")
            }
        }
        for name in names.sorted() {
            problems.add(line: number, "the end line does not count the records of \(name) that the input has")
        }
        guard end.countsDeletes else {
            if !deleteCounts.isEmpty {
                problems.add(line: number, "the end line does not count the delete lines that the input has")
            }
            return
        }
        for entity in end.entities where (deleteCounts[entity.name] ?? 0) != entity.deletes {
            problems.add(
                line: number,
                "the end line counts \(Formatting.count(entity.deletes, "delete line")) of \(entity.name), and the "
                    + "input has \(Formatting.grouped(deleteCounts[entity.name] ?? 0)): lines were lost or added")
        }
        for name in deleteCounts.keys.sorted() where end.entity(named: name) == nil {
            problems.add(line: number, "the end line does not count the delete lines of \(name) that the input has")
        }
    }

    /// The checks that need the whole input: chunk lines still due, the end line, references to IDs not seen when
    /// their line was read, and required fields.
    private func finish(_ schema: ImportSchema, _ scratch: ImportScratch) throws {
        if let expected, let value = expected.values.first {
            problems.add(
                line: expected.line,
                "\(expected.entity.name) \(expected.id): the input ends before chunk \(value.next) of \(value.field) "
                    + "(its value has \(value.descriptor.chunkCount) chunks)")
        }
        if (schema.header?.version ?? 0) >= 2 && end == nil {
            problems.add(
                line: max(lineNumber, 1),
                "the export has no end line: it is incomplete (was it cut short?), or the line was removed")
        }
        try scratch.environment.read { scratchTxn in
            try scratch.forEachPendingReference(in: scratchTxn) { pending in
                guard let target = schema.entity(ordinal: pending.target),
                    let source = schema.entity(ordinal: pending.source), pending.reference < source.references.count
                else { return }
                if let found = try scratch.record(pending.target, pending.id, in: scratchTxn), found.1.isStored {
                    return
                }
                let reference = source.references[pending.reference]
                let found = try scratch.record(pending.target, pending.id, in: scratchTxn)
                problems.add(
                    line: pending.line,
                    "\(source.name) \(pending.sourceID): \(reference.field) references \(target.name) \(pending.id), "
                        + (found.map { found in
                            found.1.isDelete
                                ? "which line \(found.line) deletes (relationship \(reference.relationship) does not "
                                    + "allow dangling references)"
                                : "which this import skips (a unique value of it is a stored record's)"
                        }
                            ?? "which is neither in the input nor in the store (relationship "
                            + "\(reference.relationship) does not allow dangling references)"))
            }
        }
        for name in recordCounts.keys.sorted() {
            guard let entity = schema[name] else { continue }
            let (required, source) = requiredFields(of: entity, schema)
            for field in required.sorted() {
                guard let lacking = missing[name]?[field], lacking.count > 0 else { continue }
                for record in lacking.first {
                    problems.add(
                        line: record.line,
                        "\(name) \(record.id): has no value for '\(field)', which every \(name) of \(source) has (a "
                            + "non-optional field of the program's model, as far as the catalogs tell)")
                }
                if lacking.count > lacking.first.count, let last = lacking.first.last {
                    problems.add(
                        line: last.line,
                        "\(Formatting.count(lacking.count - lacking.first.count, "more record")) of \(name) "
                            + "\(lacking.count - lacking.first.count == 1 ? "lacks" : "lack") '\(field)'")
                }
            }
        }
    }

    // MARK: - Required fields

    /// The fields every record of `entity` must hold, and where that is known from.
    ///
    /// The catalog records fields and their kinds, not whether the program's model declares them optional, so the
    /// evidence is the records: a field is required when every record of the entity that the export holds has it
    /// (its end line lists them) and every record the store holds has it. With neither an export nor stored records
    /// nothing but `id` is required, which the record's line checks anyway.
    private func requiredFields(of entity: ImportEntity, _ schema: ImportSchema) -> (Set<String>, String) {
        var evidence: [(Set<String>, String)] = []
        if schema.header?.version ?? 0 >= 2, let exported = end?.value.entity(named: entity.name),
            exported.records > 0
        {
            evidence.append((Set(exported.required), "the export"))
        }
        if case .some(.some(let stored)) = storedEvidence[entity.name] { evidence.append((stored, "the store")) }
        guard let first = evidence.first else { return ([], "") }
        let required = evidence.dropFirst().reduce(first.0) { $0.intersection($1.0) }
        return (required, evidence.map(\.1).joined(separator: " and "))
    }

    /// Counts, per field that may be required, the records that lack it.
    private func noteMissing(_ entity: ImportEntity, present: Set<String>, line: Int, id: UUID) {
        let candidates: [String]
        if let known = requiredCandidates[entity.name] {
            candidates = known
        } else {
            var names = Set(entity.readKinds.keys)
            if case .some(.some(let stored)) = storedEvidence[entity.name] { names.formUnion(stored) }
            candidates = names.sorted()
            requiredCandidates[entity.name] = candidates
        }
        for field in candidates where !present.contains(field) {
            var lacking = missing[entity.name, default: [:]][field, default: Missing()]
            lacking.count += 1
            if lacking.first.count < 3 { lacking.first.append((line, id)) }
            missing[entity.name, default: [:]][field] = lacking
        }
    }

    /// Whether the fields every stored record of `entity` has are yet to be learnt.
    private func needsStoredEvidence(_ entity: ImportEntity) -> Bool {
        !entity.isNew && store != nil && storedEvidence[entity.name] == nil
    }

    /// The fields every stored record of an entity holds a value other than null for, or `nil` when it has none;
    /// read a chunk of records per short read transaction.
    private func fieldsOfEveryStoredRecord(_ entity: ImportEntity) throws -> Set<String>? {
        guard let store, let records = tables[entity.name]?.records else { return nil }
        var common: Set<String>?
        var scan = ChunkedScan(environment: store.environment, table: records, chunkSize: CommonOptions.readChunkSize)
        try scan.forEach { _, key, value in
            guard let id = RecordKey.uuid(key) else { return true }
            let record = try RecordKey.decode(value, id: id, entity: entity.catalog)
            guard case .object(let entries) = record else { return true }
            let present = Set(entries.lazy.filter { $0.value != .null }.map(\.name))
            common = common.map { $0.intersection(present) } ?? present
            return !(common?.isEmpty ?? false)
        }
        return common
    }

    // MARK: - The store

    private func openTables(_ schema: ImportSchema) throws {
        guard let store else { return }
        for entity in schema.entities.values where !entity.isNew {
            var unique: [Int: Table] = [:]
            for (position, index) in entity.uniqueIndexes {
                unique[position] = try store.indexTable(of: entity.catalog, index)
            }
            var chunks: Table?
            if !entity.catalog.external.isEmpty {
                do {
                    chunks = try store.environment.openTable(named: Catalog.externalTableName(entity.name))
                } catch LMDBError.notFound {
                    throw ToolError(
                        "The table of \(entity.name)'s external values is missing; run 'kvtool check \(store.path)'")
                }
            }
            var referenceIndexes: [String: Table] = [:]
            for reference in entity.references {
                guard
                    let index = entity.catalog.indexes.first(where: {
                        $0.fields == [reference.field] && $0.isReady && $0.isDerivable
                    })
                else { continue }
                referenceIndexes[reference.field] = try store.indexTable(of: entity.catalog, index)
            }
            tables[entity.name] = StoredTables(
                records: try store.recordTable(of: entity.catalog), unique: unique, chunks: chunks,
                referenceIndexes: referenceIndexes)
        }
    }

    private func storeHas(_ entity: ImportEntity, _ id: UUID, _ txn: borrowing Transaction) throws -> Bool {
        guard let records = tables[entity.name]?.records else { return false }
        return try txn.containsKey(RecordKey.bytes(id), in: records)
    }

    /// The stored record that holds the value of the whole key `whole` (stored under `key`) in a unique index: for
    /// a key LMDB's limit cut, among the records of its group, the one whose record has the same whole value.
    private func storedUniqueHolder(
        _ entity: ImportEntity, position: Int, key: [UInt8], whole: [UInt8], _ txn: borrowing Transaction
    ) throws -> UUID? {
        guard let tables = tables[entity.name], let table = tables.unique[position],
            let index = entity.uniqueIndexes.first(where: { $0.position == position })?.catalog
        else { return nil }
        for owner in try UniqueIndexEntries.owners(of: key, in: table, txn: txn) {
            guard let holder = owner.withUnsafeBytes(RecordKey.uuid) else { continue }
            guard IndexKey.isGrouped(key) else { return holder }
            let holds = try owner.withUnsafeBytes { ownerKey in
                try txn.withUnsafeBytes(forKey: ownerKey, in: tables.records) { bytes in
                    guard let bytes,
                        let stored = try? RecordValue.decode(
                            from: unsafe BorrowedBytes(unsafe: bytes), fields: entity.catalog.fields)
                    else { return false }
                    return (try? RecordIndexKeys.wholeKeys(of: stored, in: index))?.contains(whole) == true
                }
            }
            if holds { return holder }
        }
        return nil
    }

    /// How the store completes index keys that LMDB's limit cuts.
    private var longKeyHash: LongKeyHash {
        store?.format.longKeyHash ?? .standard
    }

    /// The key a value takes in the scratch table of a unique index: its stored key, and for a key LMDB's limit cut,
    /// a second hash of the whole value, seeded anew for each import so that no input can be made to collide on both.
    private func scratchKey(_ key: [UInt8], whole: [UInt8]) -> [UInt8] {
        guard IndexKey.isGrouped(key) else { return key }
        var hash = scratchSeed
        for byte in whole {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return key + withUnsafeBytes(of: hash.bigEndian, Array.init)
    }

    private static func article(_ word: String) -> String {
        (word.first.map { "aeiou".contains($0) } == true ? "an " : "a ") + word
    }
}
