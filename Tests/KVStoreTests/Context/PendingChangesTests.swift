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
        let location = pending.inSaveOrder.first
        if case .delete = location.map(pending.change(at:)) {} else { Issue.record("the last change is kept") }
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

    /// The locations stay valid in a copy of the changes after the original changes: a save reads its copy.
    @Test func locationsStayValidInACopy() {
        var pending = PendingChanges()
        let tasks = (0..<100).map { Task(title: "\($0)", dueDate: nil, projectID: nil) }
        for task in tasks { pending.record(.insert(task), of: Task.self, id: task.id) }
        let copy = pending
        let locations = copy.inSaveOrder
        // Growing and emptying the original moves its tables; the copy keeps its own.
        for _ in 0..<1_000 {
            let task = Task(title: "more", dueDate: nil, projectID: nil)
            pending.record(.insert(task), of: Task.self, id: task.id)
        }
        pending.removeAll()
        let titles = locations.map { location -> String in
            guard case .insert(let model) = copy.change(at: location), let task = model as? Task else { return "?" }
            return task.title
        }
        let expected = tasks.sorted { $0.id.isOrdered(before: $1.id) }.map(\.title)
        #expect(titles == expected)
    }
}
