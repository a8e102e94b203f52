import Foundation
import LMDB
import Testing

@testable import KVStore

/// The change sets an observer hears, in commit order.
private final class CommitLog: ModelContainerObserver {
    let commits = Locked<[ChangeSet]>([])

    func container(_ container: ModelContainer, didCommit changes: ChangeSet, duration: Duration) {
        commits.withLock { $0.append(changes) }
    }

    var last: ChangeSet? { commits.withLock { $0.last } }
}

/// An invoice that stores its lines' IDs and cascades to them: a rule on the stored side of a relationship.
private struct Invoice: Model {
    var id = UUID.timeOrdered()
    var lineIDs: [UUID] = []
    static let entity = Entity<Invoice>(relationships: [
        .toMany("lines", \.lineIDs, to: InvoiceLine.self, deleteRule: .cascade)
    ])
}

private struct InvoiceLine: Model {
    var id = UUID.timeOrdered()
    var amount = 0
}

/// `ChangeSet.changes`: each model's change in commit order, with the delete rule that made it.
@Suite struct ChangeLogTests {
    private func container(_ log: CommitLog) throws -> ModelContainer {
        try ModelContainer(
            for: ProjectC.self, TaskC.self, SubtaskC.self, TagC.self, Invoice.self, InvoiceLine.self,
            configuration: ModelConfiguration(isStoredInMemoryOnly: true), observer: log)
    }

    @Test func aSaveLogsItsInsertsEntityByEntityInIDOrder() throws {
        let log = CommitLog()
        let container = try container(log)
        defer { try? container.close() }
        let context = ModelContext(container)
        let project = ProjectC(name: "Launch")
        let first = TaskC(title: "Plan", projectID: project.id)
        let second = TaskC(title: "Ship", projectID: project.id)
        context.insert(project)
        context.insert(second)
        context.insert(first)
        try context.save()

        let changes = try #require(log.last)
        #expect(
            changes.changes == [
                .inserted(ProjectC.self, project.id), .inserted(TaskC.self, first.id), .inserted(TaskC.self, second.id),
            ])
        #expect(changes.inserted == ["ProjectC": [project.id], "TaskC": [first.id, second.id]])
        #expect(changes.updated.isEmpty && changes.deleted.isEmpty)

        try context.modify(TaskC.self, id: second.id) { $0.title = "Ship it" }
        try context.save()
        #expect(log.last?.changes == [.updated(TaskC.self, second.id)])
        #expect(log.last?.updated == ["TaskC": [second.id]])
    }

    @Test func aCascadeNamesTheModelWhoseDeleteReachedEachModel() throws {
        let log = CommitLog()
        let container = try container(log)
        defer { try? container.close() }
        let context = ModelContext(container)
        let project = ProjectC(name: "Launch")
        let first = TaskC(title: "Plan", projectID: project.id)
        let second = TaskC(title: "Ship", projectID: project.id)
        let subtask = SubtaskC(title: "Draft", taskID: second.id)
        context.insert(project)
        context.insert(first)
        context.insert(second)
        context.insert(subtask)
        try context.save()

        context.delete(project)
        try context.save()
        let changes = try #require(log.last)
        #expect(
            changes.changes == [
                .deleted(ProjectC.self, project.id),
                .cascaded(TaskC.self, first.id, from: ProjectC.self, project.id),
                .cascaded(TaskC.self, second.id, from: ProjectC.self, project.id),
                .cascaded(SubtaskC.self, subtask.id, from: TaskC.self, second.id),
            ])
        #expect(
            changes.deleted == ["ProjectC": [project.id], "TaskC": [first.id, second.id], "SubtaskC": [subtask.id]])
        #expect(changes.changes[3].description == "deleted SubtaskC \(subtask.id) (cascade from TaskC \(second.id))")
    }

    @Test func aNullifiedReferrerIsLoggedAfterTheDeleteThatCausedIt() throws {
        let log = CommitLog()
        let container = try container(log)
        defer { try? container.close() }
        let context = ModelContext(container)
        let tag = TagC(label: "urgent")
        let kept = TagC(label: "later")
        let first = TaskC(title: "Plan", tagIDs: [tag.id, kept.id])
        let second = TaskC(title: "Ship", tagIDs: [tag.id])
        context.insert(tag)
        context.insert(kept)
        context.insert(first)
        context.insert(second)
        try context.save()

        context.delete(tag)
        try context.save()
        let changes = try #require(log.last)
        #expect(
            changes.changes == [
                .deleted(TagC.self, tag.id),
                .nullified(TaskC.self, first.id, by: TagC.self, tag.id),
                .nullified(TaskC.self, second.id, by: TagC.self, tag.id),
            ])
        #expect(changes.updated == ["TaskC": [first.id, second.id]])
        #expect(changes.changes[1].description == "updated TaskC \(first.id) (nullify on TagC \(tag.id))")
    }

    @Test func aRuleOnTheStoredSideNamesItsParent() throws {
        let log = CommitLog()
        let container = try container(log)
        defer { try? container.close() }
        let lines = [InvoiceLine(amount: 3), InvoiceLine(amount: 4)]
        let invoice = Invoice(lineIDs: lines.map(\.id))
        try container.write { txn in
            for line in lines { try txn.insert(line) }
            try txn.insert(invoice)
        }
        try container.write { txn in _ = try txn.delete(Invoice.self, id: invoice.id) }
        #expect(
            log.last?.changes == [
                .deleted(Invoice.self, invoice.id),
                .cascaded(InvoiceLine.self, lines[0].id, from: Invoice.self, invoice.id),
                .cascaded(InvoiceLine.self, lines[1].id, from: Invoice.self, invoice.id),
            ])
    }

    @Test func aModelChangedTwiceInOneTransactionHasOneEntryForItsNetChange() throws {
        let log = CommitLog()
        let container = try container(log)
        defer { try? container.close() }
        let stored = InvoiceLine(amount: 1)
        let replaced = InvoiceLine(amount: 2)
        try container.write { txn in
            try txn.insert(stored)
            try txn.insert(replaced)
        }
        let transient = InvoiceLine(amount: 3)
        try container.write { txn in
            try txn.insert(transient)
            try txn.insert(InvoiceLine(id: transient.id, amount: 4))  // still an insert
            try txn.delete(InvoiceLine.self, id: transient.id)  // inserted and deleted: no trace
            try txn.insert(InvoiceLine(id: stored.id, amount: 5))  // an update...
            try txn.delete(InvoiceLine.self, id: stored.id)  // ...that became a delete, logged here
            try txn.delete(InvoiceLine.self, id: replaced.id)  // deleted, then saved anew: two entries
            try txn.insert(InvoiceLine(id: replaced.id, amount: 6))
        }
        let changes = try #require(log.last)
        #expect(
            changes.changes == [
                .deleted(InvoiceLine.self, stored.id), .deleted(InvoiceLine.self, replaced.id),
                .inserted(InvoiceLine.self, replaced.id),
            ])
        #expect(changes.inserted == ["InvoiceLine": [replaced.id]])
        #expect(changes.updated.isEmpty)
        #expect(changes.deleted == ["InvoiceLine": [stored.id, replaced.id]])
    }

    @Test func subscribersReceiveTheLogToo() async throws {
        let container = try ModelContainer(
            for: InvoiceLine.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        var iterator = container.changes.makeAsyncIterator()
        let line = InvoiceLine(amount: 1)
        try await container.write { txn in try txn.insert(line) }
        let changes = await iterator.next()
        #expect(changes?.changes == [.inserted(InvoiceLine.self, line.id)])
    }
}
