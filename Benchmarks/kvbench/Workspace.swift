import Foundation

/// The temporary directory a kvbench process keeps its stores in, removed with everything in it at the end.
///
/// Each store gets a fresh subdirectory from ``makeDirectory(_:)`` and is removed by ``remove(_:)`` as soon as its
/// scenario is done with it.
final class Workspace {
    /// The root directory.
    let root: String
    private var counter = 0

    /// Creates a new, empty directory under the system's temporary directory.
    ///
    /// - Throws: ``WorkspaceError`` when the directory cannot be created.
    init() throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/kvbench.XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let baseAddress = buffer.baseAddress, mkdtemp(baseAddress) != nil else { return nil }
            return String(cString: baseAddress)
        }
        guard let created else {
            throw WorkspaceError(description: "Cannot create a temporary directory in \(base): errno \(errno)")
        }
        root = created
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Creates a new, empty subdirectory for one store.
    ///
    /// - Parameter name: A name that says what the store is for; a counter keeps names unique.
    /// - Returns: The directory's path.
    func makeDirectory(_ name: String) throws -> String {
        counter += 1
        let path = "\(root)/\(counter)-\(name)"
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        } catch {
            throw WorkspaceError(description: "Cannot create \(path): \(error.localizedDescription)")
        }
        return path
    }

    /// Removes a store's directory.
    func remove(_ path: String) throws {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw WorkspaceError(description: "Cannot remove \(path): \(error.localizedDescription)")
        }
    }

    /// Opens a subject on a new directory, runs `body` with it, then closes it and removes the directory.
    func withSubject<Subject: ScenarioSubject, R>(
        _ type: Subject.Type,
        settings: StoreSettings,
        _ body: (Subject) throws -> R
    ) throws -> R {
        let directory = try makeDirectory("subject")
        let subject = try Subject(directory: directory, settings: settings)
        let result: R
        do {
            result = try body(subject)
        } catch {
            try? subject.close()
            try? remove(directory)
            throw error
        }
        try subject.close()
        try remove(directory)
        return result
    }

    /// Opens a raw LMDB environment on a new directory, runs `body` with it, then closes it and removes the
    /// directory.
    func withBaseline<R>(settings: StoreSettings, _ body: (RawLMDB) throws -> R) throws -> R {
        let directory = try makeDirectory("baseline")
        let raw = try RawLMDB(directory: directory, settings: settings)
        defer {
            raw.close()
            try? remove(directory)
        }
        return try body(raw)
    }

    /// Creates a SQLite database in a new directory, runs `body` with it, then closes it and removes the directory.
    func withSQLite<R>(settings: StoreSettings, _ body: (RawSQLite) throws -> R) throws -> R {
        let directory = try makeDirectory("sqlite")
        let sqlite: RawSQLite
        do {
            sqlite = try RawSQLite(directory: directory, settings: settings)
        } catch {
            try? remove(directory)
            throw error
        }
        let result: R
        do {
            result = try body(sqlite)
        } catch {
            try? sqlite.close()
            try? remove(directory)
            throw error
        }
        try sqlite.close()
        try remove(directory)
        return result
    }
}

/// A failure to create or remove a temporary directory.
struct WorkspaceError: Error, CustomStringConvertible {
    /// What failed.
    var description: String
}
