import Foundation
import LMDB
import TestSupport
import Testing

/// The binding example of README.md, as it is written there.
@Suite struct ReadmeExampleTests {
    @Test func bindingExample() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path

        // Example: begin binding
        let environment = try Environment.open(path: path)
        let users = try environment.openTable(named: "users", create: true)

        try environment.write { txn in
            try txn.put(Array("Ada Lovelace".utf8), forKey: Array("user/1".utf8), in: users)
            try txn.put(Array("Alan Turing".utf8), forKey: Array("user/2".utf8), in: users)
        }

        let name = try environment.read { txn in
            try txn.value(forKey: Array("user/1".utf8), in: users).map { String(decoding: $0, as: UTF8.self) }
        }
        // name == "Ada Lovelace"

        let everyone = try environment.read { txn in
            try txn.entries(in: users, range: .prefix(Array("user/".utf8))).count
        }
        // everyone == 2

        do {
            try environment.write { txn in
                try txn.put(Array("Grace Hopper".utf8), forKey: Array("user/1".utf8), in: users, options: .noOverwrite)
            }
        } catch LMDBError.keyExists {
            // user/1 is taken; nothing was written.
        }
        // Example: end binding

        #expect(name == "Ada Lovelace")
        #expect(everyone == 2)
        let unchanged = try environment.read { txn in try txn.value(forKey: Array("user/1".utf8), in: users) }
        #expect(unchanged == Array("Ada Lovelace".utf8))
        try environment.close()
    }
}

extension ReadmeExampleTests {
    @Test func theDocumentationShowsTheExampleAsTested() throws {
        #expect(try documentationDifferences([("binding", 8)], testedIn: #filePath) == [])
    }
}
