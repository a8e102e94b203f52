import Foundation
import Testing

@testable import KVStore

/// A project of the projects-and-tasks domain.
struct Project: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static let entity = Entity<Project>(indexes: [.unique(\.name)])
}

/// A task of the projects-and-tasks domain.
struct Task: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var isDone = false
    var dueDate: Date?
    var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
    var projectID: UUID?
    var priority = 0

    static let entity = Entity<Task>(indexes: [.index(\.projectID), .index(\.dueDate), .index(\.priority)])
}

/// A model of the second domain, with nested Codable values.
struct Recipe: Model, Equatable {
    struct Ingredient: Codable, Equatable {
        var name: String
        var grams: Double
        var optional: Bool?
    }

    enum Course: String, Codable, IndexKeyEncodable {
        case starter, main, dessert
    }

    enum Source: Codable, Equatable {
        case book(title: String, page: Int)
        case web(URL)
        case family
    }

    var id = UUID.timeOrdered()
    var title: String
    var course: Course
    var ingredients: [Ingredient]
    var steps: [String]
    var nutrition: [String: Double]
    var ratings: [Int: Int]
    var tags: Set<String>
    var source: Source
    var tagIDs: [UUID] = []

    static let entity = Entity<Recipe>(indexes: [.index(\.course), .index(\.tagIDs)])
}

/// An in-memory container for the given models, closed when the test ends.
@discardableResult
func withContainer<R>(
    _ types: any StoredModel.Type...,
    body: (ModelContainer) throws -> R
) throws -> R {
    let container = try ModelContainer(for: types, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
    defer { try? container.close() }
    return try body(container)
}

/// A temporary directory for on-disk stores, removed at the end of the test.
struct StoreDirectory: ~Copyable {
    let path: String

    init() {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath()
        path = base.appendingPathComponent("kvstore-tests-\(UUID().uuidString)").path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The next element of an iterator, or `nil` after `seconds`.
///
/// The default is generous: callers wait for elements that come, and under the address sanitizer's run of the whole
/// suite, beside other tests' servers and child processes, a container's poll may not get a thread for seconds.
func next<T: Sendable>(
    _ iterator: inout AsyncStream<T>.Iterator,
    within seconds: Double = 30
) async -> T? {
    // AsyncStream's iterator honours cancellation; racing it against a timer bounds the wait.
    nonisolated(unsafe) var copy = iterator
    defer { iterator = copy }
    return await withTaskGroup(of: T?.self) { group in
        group.addTask { await copy.next() }
        group.addTask {
            try? await _Concurrency.Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
