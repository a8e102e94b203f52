import Foundation
import Testing

@testable import KVStore

/// The pending changes' bookkeeping: a forgotten change leaves nothing to save, and a change recorded again after it
/// is saved once.
@Suite struct PendingChangesTests {
    @Test func aForgottenChangeLeavesNothingAndAChangeRecordedAgainIsSavedOnce() {
        var pending = PendingChanges()
        let task = Task(title: "a", dueDate: nil, projectID: nil)
        pending.record(.insert(task), of: Task.self, id: task.id)
        #expect(!pending.isEmpty)
        pending.forget(Task.self, id: task.id)
        #expect(pending.isEmpty)
        #expect(pending.inSaveOrder.isEmpty)
        pending.forget(Task.self, id: task.id)
        #expect(pending.isEmpty)
        pending.record(.insert(task), of: Task.self, id: task.id)
        pending.record(.delete(Task.self), of: Task.self, id: task.id)
        #expect(pending.inSaveOrder.map(\.id) == [task.id])
        if case .delete = pending.inSaveOrder.first?.change {} else { Issue.record("the last change is kept") }
    }

    /// Deleting thousands of objects inserted and not saved forgets each change in one lookup, and the save writes
    /// only the others, in ID order.
    @Test func forgettingManyInsertsKeepsTheOthersInOrder() {
        var pending = PendingChanges()
        let tasks = (0..<5_000).map { Task(title: "\($0)", dueDate: nil, projectID: nil) }
        for task in tasks { pending.record(.insert(task), of: Task.self, id: task.id) }
        for task in tasks where Int(task.title)! % 2 == 0 { pending.forget(Task.self, id: task.id) }
        let kept = tasks.filter { Int($0.title)! % 2 == 1 }.map(\.id).sorted { $0.isOrdered(before: $1) }
        #expect(pending.inSaveOrder.map(\.id) == kept)
    }
}
