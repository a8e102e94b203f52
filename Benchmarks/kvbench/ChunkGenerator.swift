import Foundation

/// Generates the projects, then the tasks, of the scale series a chunk at a time, each task in a random one of the
/// projects, so that a process holds one chunk whatever the size of the store: a project's ID is computed from its
/// position (``RecordFactory/projectID(at:)``), not kept.
struct ChunkGenerator {
    private var factory: RecordFactory
    /// How many projects there are.
    let projectCount: Int
    /// How many projects were made so far; tasks are made once they all are, since a task's project must exist.
    private var projectsMade = 0

    /// Creates the generator; equal arguments give equal chunks.
    init(order: IDOrder, projectCount: Int) {
        factory = RecordFactory(order: order, seed: ScenarioContext.seed &+ 60)
        self.projectCount = projectCount
    }

    /// The next `count` projects.
    mutating func nextProjects(_ count: Int) -> [ProjectRecord] {
        precondition(projectsMade + count <= projectCount, "more projects than the generator was made for")
        projectsMade += count
        return (0..<count).map { _ in factory.makeProject() }
    }

    /// The next `count` tasks, once every project was made.
    mutating func next(_ count: Int) -> [TaskRecord] {
        precondition(projectsMade == projectCount, "tasks before all their projects")
        var tasks: [TaskRecord] = []
        tasks.reserveCapacity(count)
        for _ in 0..<count {
            tasks.append(factory.makeTask(projectID: factory.projectID(at: factory.randomInt(below: projectCount))))
        }
        return tasks
    }
}
