import Foundation
import TestSupport

/// Makes tasks and projects with plausible contents from a seeded generator.
struct RecordFactory {
    private var random: SplitMix64
    private var taskIDs: IDGenerator
    private var projectIDs: IDGenerator
    private var serial = 0

    private static let verbs = [
        "Review", "Draft", "Fix", "Plan", "Test", "Ship", "Update", "Design", "Write", "Refactor", "Measure",
        "Document", "Schedule", "Prepare", "Check",
    ]
    private static let objects = [
        "the quarterly budget", "the login page", "release notes", "the onboarding flow", "invoice export",
        "the search index", "customer feedback", "the backup script", "dark mode colours", "the sync engine",
        "team offsite agenda", "API rate limits", "the settings screen", "crash reports",
    ]

    /// The seed of the project IDs' generator.
    private let projectSeed: UInt64

    /// Creates a factory whose task IDs follow `order`; projects always get time-ordered IDs.
    init(order: IDOrder, seed: UInt64) {
        random = SplitMix64(seed: seed)
        taskIDs = IDGenerator(order: order, seed: seed &+ 1)
        projectSeed = seed &+ 2
        projectIDs = IDGenerator(order: .timeOrdered, seed: projectSeed)
    }

    /// The ID of the `index`th project (from 0) that ``makeProject()`` makes, made or not.
    func projectID(at index: Int) -> UUID {
        IDGenerator.timeOrderedID(at: index, seed: projectSeed)
    }

    /// A new project.
    mutating func makeProject() -> ProjectRecord {
        let id = projectIDs.next()
        let number = random.next() % 100_000
        return ProjectRecord(id: id, name: "Project \(number) \(Self.objects[Int(number % 14)])")
    }

    /// A new task of the project `projectID`, created one second after the previous task.
    mutating func makeTask(projectID: UUID) -> TaskRecord {
        serial += 1
        let length = 30 + Int(random.next() % 17)
        var title = "\(Self.verbs[Int(random.next() % 15)]) \(Self.objects[Int(random.next() % 14)]) #\(serial)"
        while title.utf8.count < length {
            title += " \(Self.verbs[Int(random.next() % 15)].lowercased())"
        }
        title = String(title.utf8.prefix(length)) ?? title
        let created = Date(timeIntervalSinceReferenceDate: 757_382_400 + Double(serial))
        let due = created.addingTimeInterval(Double(3_600 * (1 + random.next() % 720)))
        return TaskRecord(
            id: taskIDs.next(), title: title, isDone: random.next() % 4 == 0, createdAt: created, dueAt: due,
            projectID: projectID)
    }

    /// A random integer in `0..<bound`.
    mutating func randomInt(below bound: Int) -> Int {
        Int(random.next() % UInt64(bound))
    }
}
