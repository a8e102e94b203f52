import Foundation
import Testing

@testable import KVStore

/// A process killed inside a read transaction leaves its reader slot behind; opening a container clears it.
@Suite struct StaleReaderTests {
    @Test func openingAContainerClearsTheSlotOfAKilledReader() async throws {
        let directory = StoreDirectory()
        let path = directory.path
        let configuration = ModelConfiguration(path: path, durability: .off)
        // This container stands for another process that keeps the store open: without it, the next opener would
        // reset LMDB's reader table, and there would be no stale slot to clear.
        let holder = try ModelContainer(for: Project.self, configuration: configuration)
        defer { try? holder.close() }
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            do {
                let container = try ModelContainer(
                    for: Project.self, configuration: ModelConfiguration(path: path, durability: .off))
                try container.read { _ in
                    _ = kill(getpid(), SIGKILL)
                    Thread.sleep(forTimeInterval: 10)
                }
            } catch {
                exit(1)
            }
        }
        let stale = try holder.environment.readers()
        #expect(stale.count == 1)
        #expect(stale.first?.processID != getpid())

        // The registry hands out the environment already open, as another process would find the lock file.
        let reopened = try ModelContainer(for: Project.self, configuration: configuration)
        #expect(try reopened.environment.readers().isEmpty)
    }
}
