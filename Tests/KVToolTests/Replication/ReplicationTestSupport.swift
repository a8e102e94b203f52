import Foundation
import KVStore
import NATSTestSupport
import Testing

/// A primary store of projects and tasks with its history on, the nats-server its stream lives on, and the
/// `replicate-*` commands run against both.
struct ReplicationSetup: ~Copyable {
    /// The stream the tests publish to.
    static let stream = "ORDERS"

    /// The primary's directory; its siblings hold the copies.
    let primary: TemporaryStore
    /// The server.
    let server: NATSServer
    /// The store ID of the primary's history, which its tokens and its replicas' carry.
    let storeID: UUID

    /// Writes the primary (two commits: the projects, then the tasks) and starts a server.
    init() throws {
        // Every member is assigned at the end, after the calls that throw: a noncopyable value is never left
        // partly initialized.
        let primary = TemporaryStore()
        let storeID = try Self.makePrimary(at: primary.path)
        let server = try NATSServer()
        self.storeID = storeID
        self.server = server
        self.primary = primary
    }

    /// A path beside the primary, removed with it.
    func sibling(_ name: String) -> String {
        primary.sibling(name)
    }

    /// The token of the primary's history at `position`.
    func token(_ position: Int) -> String {
        "\(storeID.uuidString):\(position)"
    }

    /// Opens the store at `path` for the sample models.
    static func container(_ path: String) throws -> ModelContainer {
        try ModelContainer(
            for: Project.self, Task.self, configuration: ModelConfiguration(path: path, durability: .off))
    }

    /// Writes the sample store with its history on, in two commits, and returns its history's store ID.
    static func makePrimary(at path: String) throws -> UUID {
        let container = try container(path)
        defer { try? container.close() }
        let start = try container.enableHistory(retention: .unlimited)
        let context = ModelContext(container)
        context.insert(Sample.inbox)
        context.insert(Sample.garden)
        try context.save()
        for task in Sample.tasks { context.insert(task) }
        try context.save()
        return start.storeID
    }

    /// Commits `count` new tasks on the primary, one commit each, with an update of a sample task in the last.
    func commit(_ count: Int) throws {
        let container = try Self.container(primary.path)
        defer { try? container.close() }
        for index in 0..<count {
            try container.write { txn in
                try txn.insert(Task(title: "New task \(index)", projectID: Sample.garden.id))
                if index == count - 1 {
                    var task = Sample.tasks[0]
                    task.isDone = true
                    try txn.insert(task)
                }
            }
        }
    }

    /// A copy of the primary (or of the store at `source`) as it is now, made by `kvtool copy`: how a replica starts.
    func copyOfPrimary(named name: String, of source: String? = nil) throws -> String {
        let path = sibling(name)
        let result = kvtool("copy", source ?? primary.path, path)
        try #require(result.status == 0, "copy: \(result.errors)")
        return path
    }

    /// Runs `kvtool replicate-<command> <path> --server <url> --stream ORDERS <more>` in-process.
    func replicate(_ command: String, _ path: String, _ more: String...) -> RunResult {
        kvtool(arguments: ["replicate-\(command)", path] + connection + more)
    }

    /// `--server <url> --stream ORDERS`.
    var connection: [String] {
        ["--server", server.url, "--stream", Self.stream]
    }
}
