import Foundation

/// Generates the projects, then the tasks, of the scale series a chunk at a time, each task in a random one of the
/// projects, so that a process holds one chunk and the projects' IDs whatever the size of the store.
struct ChunkGenerator {
    private var factory: RecordFactory
    /// How many projects there are.
    let projectCount: Int
    /// The IDs of the projects made so far; tasks are made once they all are, since a task's project must exist.
    private var projectIDs: [UUID] = []

    /// Creates the generator; equal arguments give equal chunks.
    init(order: IDOrder, projectCount: Int) {
        factory = RecordFactory(order: order, seed: ScenarioContext.seed &+ 60)
        self.projectCount = projectCount
        projectIDs.reserveCapacity(projectCount)
    }

    /// The next `count` projects.
    mutating func nextProjects(_ count: Int) -> [ProjectRecord] {
        precondition(projectIDs.count + count <= projectCount, "more projects than the generator was made for")
        let projects = (0..<count).map { _ in factory.makeProject() }
        projectIDs.append(contentsOf: projects.map(\.id))
        return projects
    }

    /// The next `count` tasks, once every project was made.
    mutating func next(_ count: Int) -> [TaskRecord] {
        precondition(projectIDs.count == projectCount, "tasks before all their projects")
        var tasks: [TaskRecord] = []
        tasks.reserveCapacity(count)
        for _ in 0..<count {
            tasks.append(factory.makeTask(projectID: projectIDs[factory.randomInt(below: projectIDs.count)]))
        }
        return tasks
    }
}
