import Foundation

/// One side of the class/struct comparison with its store open, in a directory of the workspace: opened filled,
/// renewed when a scenario has used up what it changes, closed and removed at the end.
final class ComparisonSide<Subject: ModelKindSubject> {
    private let workspace: Workspace
    private let settings: StoreSettings
    private let dataset: Dataset
    private let includingTasks: Bool
    private let chunkSize: Int
    private var directory: String
    /// The side, on its open store.
    private(set) var subject: Subject

    /// Opens a new store for `Subject` filled with `dataset`; see
    /// ``ModelKindSubject/init(directory:settings:filledWith:includingTasks:chunkSize:)``.
    init(
        _ type: Subject.Type, in workspace: Workspace, settings: StoreSettings, filledWith dataset: Dataset,
        includingTasks: Bool = true, chunkSize: Int
    ) throws {
        self.workspace = workspace
        self.settings = settings
        self.dataset = dataset
        self.includingTasks = includingTasks
        self.chunkSize = chunkSize
        (directory, subject) = try Self.open(
            in: workspace, settings: settings, dataset: dataset, includingTasks: includingTasks, chunkSize: chunkSize)
    }

    /// Closes the store, removes it, and opens a new one filled as the first was.
    func renew() throws {
        try close()
        (directory, subject) = try Self.open(
            in: workspace, settings: settings, dataset: dataset, includingTasks: includingTasks, chunkSize: chunkSize)
    }

    /// Closes the store and removes its directory.
    func close() throws {
        try subject.close()
        try workspace.remove(directory)
    }

    /// Opens a side, runs `body` with it, then closes it: one store for the duration of `body`.
    static func with<R>(
        _ type: Subject.Type, in workspace: Workspace, settings: StoreSettings, filledWith dataset: Dataset,
        includingTasks: Bool = true, chunkSize: Int, _ body: (ComparisonSide) throws -> R
    ) throws -> R {
        let side = try ComparisonSide(
            type, in: workspace, settings: settings, filledWith: dataset, includingTasks: includingTasks,
            chunkSize: chunkSize)
        let result: R
        do {
            result = try body(side)
        } catch {
            try? side.close()
            throw error
        }
        try side.close()
        return result
    }

    private static func open(
        in workspace: Workspace, settings: StoreSettings, dataset: Dataset, includingTasks: Bool, chunkSize: Int
    ) throws -> (String, Subject) {
        let directory = try workspace.makeDirectory(Subject.name)
        do {
            let subject = try Subject(
                directory: directory, settings: settings, filledWith: dataset, includingTasks: includingTasks,
                chunkSize: chunkSize)
            return (directory, subject)
        } catch {
            try? workspace.remove(directory)
            throw error
        }
    }
}
