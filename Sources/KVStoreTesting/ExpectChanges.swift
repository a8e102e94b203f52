import Foundation
import KVStore
import Testing

/// Runs one unit of work on a fresh context of `container` and expects it to change exactly `expected`, in order:
/// the models inserted, updated and deleted, and those the delete rules cascaded to or nullified.
///
/// `body` gets a new `ModelContext` on `container`; the context is saved when `body` returns, so `body` may leave
/// the save to it or save itself. The changes compared are the `ChangeSet.changes` of every commit the
/// container makes while `body` runs, one commit after the other: the save's, and those of any other writer of the
/// container meanwhile. When they differ from `expected`, a Swift Testing issue is recorded at the call, listing
/// both with the differing lines marked (`-` expected, `+` actual); the test goes on.
///
/// ```swift
/// try expectChanges(
///     in: container,
///     [
///         .deleted(Project.self, project.id),
///         .cascaded(Task.self, task.id, from: Project.self, project.id),
///     ]
/// ) { context in
///     context.delete(project)
/// }
/// ```
///
/// This is the `expect:` of bloc_test, for a store: the changes are compared whole, so an expectation that leaves a
/// change out fails as one that names a wrong one does.
///
/// - Parameters:
///   - container: The container the work writes to; it need not be observed.
///   - expected: The changes the work must make, in commit order. `ChangeSet.Change`'s static functions
///     (`.inserted(Task.self, id)`, `.cascaded(Task.self, id, from: Project.self, projectID)`) build them.
///   - sourceLocation: Where to report a difference: the call, by default.
///   - body: The unit of work.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws, or what saving the context throws (such as `KVStoreError.uniqueViolation`); the
///   changes are not compared then.
@discardableResult
public func expectChanges<R>(
    in container: ModelContainer,
    _ expected: [ChangeSet.Change],
    sourceLocation: SourceLocation = #_sourceLocation,
    when body: (ModelContext) throws -> R
) throws -> R {
    let (result, commits) = try container.recordingChanges {
        let context = ModelContext(container)
        let result = try body(context)
        try context.save()
        return result
    }
    recordDifference(expected: expected, actual: commits.flatMap(\.changes), sourceLocation: sourceLocation)
    return result
}

/// Runs one unit of work that suspends, such as a call to a `ModelActor`, on a fresh context of `container`, and
/// expects it to change exactly `expected`, in order, as the synchronous
/// ``expectChanges(in:_:sourceLocation:when:)`` does. It runs on the caller's actor (a `@MainActor` test's
/// too), where `body` runs and the context lives.
///
/// - Parameters:
///   - container: The container the work writes to; it need not be observed.
///   - expected: The changes the work must make, in commit order.
///   - isolation: The caller's actor, by default.
///   - sourceLocation: Where to report a difference: the call, by default.
///   - body: The unit of work.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws, or what saving the context throws; the changes are not compared then.
@discardableResult
public func expectChanges<R>(
    in container: ModelContainer,
    _ expected: [ChangeSet.Change],
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    when body: (ModelContext) async throws -> R
) async throws -> R {
    let (result, commits) = try await container.recordingChanges {
        let context = ModelContext(container)
        let result = try await body(context)
        try context.save()
        return result
    }
    recordDifference(expected: expected, actual: commits.flatMap(\.changes), sourceLocation: sourceLocation)
    return result
}

/// Records an issue at `sourceLocation` when `actual` is not `expected`.
private func recordDifference(
    expected: [ChangeSet.Change], actual: [ChangeSet.Change], sourceLocation: SourceLocation
) {
    guard actual != expected else { return }
    Issue.record(
        Comment(rawValue: changeDifference(expected: expected, actual: actual)), sourceLocation: sourceLocation)
}

/// The expected and actual changes as one list, the lines only one side has marked `-` (expected) and `+` (actual),
/// after a line that counts both.
func changeDifference(expected: [ChangeSet.Change], actual: [ChangeSet.Change]) -> String {
    let difference = actual.difference(from: expected)
    var removed = Set<Int>()
    var inserted = Set<Int>()
    for change in difference {
        switch change {
        case .remove(let offset, _, _): removed.insert(offset)
        case .insert(let offset, _, _): inserted.insert(offset)
        }
    }
    var lines = [
        "The changes differ from those expected (\(expected.count) expected, \(actual.count) made; "
            + "-: expected only, +: made only):"
    ]
    var (old, new) = (0, 0)
    while old < expected.count || new < actual.count {
        if old < expected.count, removed.contains(old) {
            lines.append("- \(expected[old])")
            old += 1
        } else if new < actual.count, inserted.contains(new) {
            lines.append("+ \(actual[new])")
            new += 1
        } else if old < expected.count, new < actual.count {
            lines.append("  \(expected[old])")
            old += 1
            new += 1
        } else {
            break
        }
    }
    if actual.isEmpty { lines.append("(it changed nothing)") }
    return lines.joined(separator: "\n")
}
