import Foundation
import Testing

@testable import KVStore

/// A store without a path lives where the XDG base directory specification puts a program's data, never in the
/// working directory, and says so when there is no such place.
@Suite struct DefaultLocationTests {
    @Test func xdgDataHomeComesFirst() throws {
        let location = ModelConfiguration.defaultLocation(
            named: "default", environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/ada"], program: "notes")
        #expect(try location.get() == "/data/notes/default.store")
    }

    @Test func homeIsTheFallbackAndARelativeXDGDataHomeIsIgnored() throws {
        let fallback = ModelConfiguration.defaultLocation(
            named: "cache", environment: ["HOME": "/home/ada"], program: "notes")
        #expect(try fallback.get() == "/home/ada/.local/share/notes/cache.store")
        let relative = ModelConfiguration.defaultLocation(
            named: "default", environment: ["XDG_DATA_HOME": "data", "HOME": "/home/ada"], program: "notes")
        #expect(try relative.get() == "/home/ada/.local/share/notes/default.store")
    }

    @Test func slashesInNamesStayInsideTheDataDirectory() throws {
        let location = ModelConfiguration.defaultLocation(
            named: "../escape", environment: ["HOME": "/home/ada"], program: "tools/notes")
        #expect(try location.get() == "/home/ada/.local/share/tools_notes/.._escape.store")
    }

    @Test func withNeitherVariableThereIsNoDefault() {
        let location = ModelConfiguration.defaultLocation(named: "default", environment: [:], program: "notes")
        guard case .failure(let problem) = location else {
            Issue.record("a location without XDG_DATA_HOME or HOME: \(location)")
            return
        }
        #expect(problem.message.contains("neither XDG_DATA_HOME nor HOME is set"))
    }

    @Test func theDefaultConfigurationIsNotTheWorkingDirectory() throws {
        let configuration = ModelConfiguration()
        let path = try #require(configuration.path)
        #expect(path.hasPrefix("/"))
        #expect(path.hasSuffix("/\(ProcessInfo.processInfo.processName)/default.store"))
        #expect(!configuration.isStoredInMemoryOnly)
        #expect(ModelConfiguration("notes").path?.hasSuffix("/notes.store") == true)
        #expect(ModelConfiguration(isStoredInMemoryOnly: true).isStoredInMemoryOnly)
    }

    @Test func anUnresolvedDefaultIsRefusedAtOpenAndAPathReplacesIt() throws {
        var configuration = ModelConfiguration(isStoredInMemoryOnly: true)
        configuration.unresolvedLocation = "The store default has no default location"
        #expect(!configuration.isStoredInMemoryOnly)
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: Project.self, configuration: configuration)
        }
        #expect(error == .storage)
        #expect(error.description.contains("has no default location"))
        let directory = StoreDirectory()
        configuration.path = directory.path
        #expect(configuration.unresolvedLocation == nil)
        let container = try ModelContainer(for: Project.self, configuration: configuration)
        try container.close()
    }

    @Test func aFileURLNamesTheDirectory() {
        #expect(ModelConfiguration(url: URL(fileURLWithPath: "/var/lib/notes")).path == "/var/lib/notes")
    }
}
