import Foundation
import KVStore
import LMDB
import Testing

/// `check` on a clean store, and on stores damaged on purpose through the LMDB binding: it reports exactly the
/// damage done.
@Suite struct CheckTests {
    static let summary = "2 entities, 6 records, 12 index entries, 3 references checked."

    /// Makes the sample store with its relationships, damages it, and returns what `check` printed.
    private func checkDamaged(_ damage: (Environment) throws -> Void) throws -> RunResult {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        try withEnvironment(at: store.path, damage)
        return kvtool("check", store.path)
    }

    @Test func cleanStorePasses() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        #expect(
            kvtool("check", store.path) == RunResult(status: 0, output: "No problems: \(Self.summary)\n", errors: ""))
        let json = kvtool("check", store.path, "--json")
        #expect(json.status == 0)
        #expect(json.output.contains(#""ok": true"#))
        #expect(json.output.contains(#""problems": []"#))
    }

    @Test func removedIndexEntry() throws {
        let task = Sample.tasks[2]
        let result = try checkDamaged { environment in
            let index = try environment.openTable(named: "index/Task/projectID", options: [.dupSort, .dupFixed])
            let removed = try environment.write { txn in
                try txn.delete(bytes(task.id), forKey: indexKey(task.projectID), in: index)
            }
            #expect(removed)
        }
        #expect(
            result
                == RunResult(
                    status: 1,
                    output: """
                        error: Task \(task.id): missing from index projectID (projectID = "\(Sample.garden.id)")
                        1 error, 0 warnings: 2 entities, 6 records, 11 index entries, 3 references checked.

                        """, errors: ""))
    }

    @Test func indexEntryPointingNowhere() throws {
        let ghost = fixedID(99, entity: 2)
        let result = try checkDamaged { environment in
            let index = try environment.openTable(named: "index/Task/projectID", options: [.dupSort, .dupFixed])
            try environment.write { txn in try txn.put(bytes(ghost), forKey: indexKey(Sample.inbox.id), in: index) }
        }
        #expect(result.status == 1)
        #expect(
            result.output == """
                error: index Task.projectID: the entry (projectID = "\(Sample.inbox.id)") points to Task \(ghost), which does not exist
                1 error, 0 warnings: 2 entities, 6 records, 13 index entries, 3 references checked.

                """)
    }

    @Test func indexEntryWithTheWrongValue() throws {
        let task = Sample.tasks[0]
        let result = try checkDamaged { environment in
            let index = try environment.openTable(named: "index/Task/projectID", options: [.dupSort, .dupFixed])
            try environment.write { txn in try txn.put(bytes(task.id), forKey: indexKey(Sample.garden.id), in: index) }
        }
        #expect(
            result.output.split(separator: "\n").first
                == #"error: index Task.projectID: the entry (projectID = "\#(Sample.garden.id)") points to Task \#(task.id), whose value is projectID = "\#(Sample.inbox.id)""#
        )
    }

    @Test func recordCutShort() throws {
        let task = Sample.tasks[1]
        let result = try checkDamaged { environment in
            let records = try environment.openTable(named: "records/Task")
            try environment.write { txn in
                let record = try #require(try txn.value(forKey: bytes(task.id), in: records))
                try txn.put(record.dropLast(5), forKey: bytes(task.id), in: records)
            }
        }
        #expect(
            result.output == """
                error: Task \(task.id): the record does not decode: Corrupt record at byte 75: its checksum does not match its bytes
                1 error, 0 warnings: 2 entities, 6 records, 11 index entries, 2 references checked.

                """)
    }

    @Test func danglingReferenceUnderNullifyIsAnError() throws {
        let result = try checkDamaged { environment in
            let projects = try environment.openTable(named: "records/Project")
            let names = try environment.openTable(named: "index/Project/name")
            var key: [UInt8] = []
            "Inbox".appendIndexKey(to: &key)
            let removed = try environment.write { txn in
                [try txn.delete(forKey: bytes(Sample.inbox.id), in: projects), try txn.delete(forKey: key, in: names)]
            }
            #expect(removed == [true, true])
        }
        #expect(
            result.output == """
                error: Task \(Sample.tasks[0].id): project (field projectID) references Project \(Sample.inbox.id), which does not exist (delete rule nullify)
                1 error, 0 warnings: 2 entities, 5 records, 10 index entries, 3 references checked.

                """)
    }

    @Test func danglingReferenceUnderNoActionIsAWarning() throws {
        let store = TemporaryStore()
        let ghost = fixedID(77, entity: 1)
        try Sample.makeStore(
            at: store.path, tasks: [Task(id: fixedID(1, entity: 2), title: "Orphan", projectID: ghost)])
        try Sample.addRelationships(at: store.path)
        try Sample.editCatalog(at: store.path) { entities in entities["Task"]?.relationships[0].deleteRule = "noAction"
        }
        let result = kvtool("check", store.path)
        #expect(result.status == 0)
        #expect(
            result.output.hasPrefix(
                "warning: Task \(fixedID(1, entity: 2)): project (field projectID) references Project \(ghost), which does not exist (delete rule noAction)\n0 errors, 1 warning"
            ))
    }

    @Test func catalogInconsistencies() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.editCatalog(at: store.path) { entities in
            entities["Task"]?.relationships = [
                try Sample.relationship(
                    #"{"name":"owner","target":"Person","cardinality":"toOne","field":"projectID","#
                        + #""deleteRule":"explode","allowsDangling":false}"#)
            ]
            entities["Project"]?.indexes.append(
                try JSONDecoder().decode(
                    IndexCatalog.self,
                    from: Data(
                        #"{"name":"size","fields":["size"],"isUnique":false,"isMultiEntry":false,"isReady":true}"#.utf8)
                ))
        }
        let result = kvtool("check", store.path)
        #expect(result.status == 1)
        #expect(
            result.output.split(separator: "\n").dropLast() == [
                "warning: index Project.size: the field 'size' is not in the field table (no record has stored it)",
                "error: index Project.size: its table 'index/Project/size' is missing",
                "error: relationship Task.owner: unknown delete rule 'explode'",
                "error: relationship Task.owner: its target 'Person' is not in the catalog",
            ])
    }
}
