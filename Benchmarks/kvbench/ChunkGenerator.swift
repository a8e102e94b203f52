import Foundation

/// Generates the tasks of the scale series a chunk at a time, each in a random one of `projectCount` projects, so
/// that a process holds one chunk whatever the size of the store.
struct ChunkGenerator {
    private var factory: RecordFactory
    /// The projects the tasks belong to; stores hold them before the first chunk, since a task's project must exist.
    let projects: [ProjectRecord]

    /// Creates the generator; equal arguments give equal chunks.
    init(order: IDOrder, projectCount: Int) {
        factory = RecordFactory(order: order, seed: ScenarioContext.seed &+ 60)
        var projects: [ProjectRecord] = []
        projects.reserveCapacity(projectCount)
        for _ in 0..<projectCount {
            projects.append(factory.makeProject())
        }
        self.projects = projects
    }

    /// The next `count` tasks.
    mutating func next(_ count: Int) -> [TaskRecord] {
        var tasks: [TaskRecord] = []
        tasks.reserveCapacity(count)
        for _ in 0..<count {
            let project = projects[factory.randomInt(below: projects.count)]
            tasks.append(factory.makeTask(projectID: project.id))
        }
        return tasks
    }
}
