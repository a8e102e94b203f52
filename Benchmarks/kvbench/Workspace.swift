import Foundation

/// The temporary directory a kvbench process keeps its stores in, removed with everything in it at the end.
///
/// Each store gets a fresh subdirectory from ``makeDirectory(_:)`` and is removed by ``remove(_:)`` as soon as its
/// scenario is done with it.
final class Workspace {
    /// The root directory.
    let root: String
    private var counter = 0
    /// The bytes of the files the last store closed by ``withSubject(_:settings:_:)``, ``withBaseline(settings:_:)``
    /// or ``withSQLite(settings:_:)`` kept on disk, measured after it closed (see ``storeBytes(in:)``).
    private(set) var lastStoreBytes: Int?

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
        lastStoreBytes = Self.storeBytes(in: directory)
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
            lastStoreBytes = Self.storeBytes(in: directory)
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
        lastStoreBytes = Self.storeBytes(in: directory)
        try remove(directory)
        return result
    }

    /// The bytes of the regular files in `directory` but LMDB's lock file, the space a closed store keeps on disk:
    /// LMDB's `data.mdb` (its size is the pages ever written, free pages included), or SQLite's database file (its
    /// write-ahead log is checkpointed into it and removed at close). `nil` when the directory cannot be read.
    static func storeBytes(in directory: String) -> Int? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        var total = 0
        for name in names where name != "lock.mdb" {
            var status = stat()
            guard lstat("\(directory)/\(name)", &status) == 0 else { return nil }
            if status.st_mode & S_IFMT == S_IFREG { total += Int(status.st_size) }
        }
        return total
    }
}

/// A failure to create or remove a temporary directory.
struct WorkspaceError: Error, CustomStringConvertible {
    /// What failed.
    var description: String
}
