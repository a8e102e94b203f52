#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process-wide table of open environments, one core per canonical path, with the number of handles on each.
///
/// LMDB forbids opening one environment twice in a process: POSIX file locks belong to the process, so closing the
/// second `MDB_env` would release the first one's locks. The registry hands every open of a path a new handle on the
/// core that is already open there, and closes the core when its last handle goes. A core being closed stays listed
/// until its `MDB_env` is closed, so that an open of the same path meanwhile waits instead of opening the file a
/// second time.
enum EnvironmentRegistry {
    private struct Entry {
        let core: EnvironmentCore
        var handles: Int
        var isClosing = false
    }

    private static let entries = Locked<[String: Entry]>([:])

    /// Returns a new handle on the environment open at `path`, or calls `open` to open it, under the registry's lock
    /// so that two threads never open one path twice.
    static func environment(
        at path: String,
        configuration: Environment.Configuration,
        open: (String) throws(LMDBError) -> OpaquePointer
    ) throws(LMDBError) -> Environment {
        while true {
            let core = try entries.withLock { entries throws(LMDBError) -> EnvironmentCore? in
                if let entry = entries[path] {
                    if entry.isClosing { return nil }
                    if entry.core.configuration.options.contains(.readOnly)
                        && !configuration.options.contains(.readOnly)
                    {
                        throw LMDBError(
                            code: LMDBError.accessDenied.code, operation: "open", path: path,
                            detail: "The environment is already open read-only in this process")
                    }
                    entries[path]?.handles += 1
                    return entry.core
                }
                let handle = try unsafe open(path)
                let core = unsafe EnvironmentCore(handle: handle, path: path, configuration: configuration)
                entries[path] = Entry(core: core, handles: 1)
                return core
            }
            guard let core else {
                // The last handle of the path is closing its environment: open it anew once that is done.
                usleep(100)
                continue
            }
            // A handle that asks for more table slots than the environment has gets them when it opens a table that
            // needs one: growing reopens the environment once no transaction is alive, which must not make an open
            // wait for the transactions of other threads.
            let environment = Environment(core: core)
            // A handle that asks for more durability than the environment has gets it now, for every handle.
            do {
                try core.strengthenSync(to: configuration.options)
            } catch let error as LMDBError {
                // The handle goes (deinit releases it), and the open fails.
                throw error.adding(operation: "mdb_env_set_flags", path: path)
            } catch {
                throw LMDBError(code: EINVAL, operation: "open", path: path, detail: "\(error)")
            }
            return environment
        }
    }

    /// Gives up one handle of `core`, which was dropped without ``Environment/close()``; the last one closes the
    /// environment.
    ///
    /// No transaction can be alive then: every transaction holds its handle.
    static func release(_ core: EnvironmentCore) {
        let isLast = entries.withLock { entries -> Bool in
            guard var entry = entries[core.path], entry.core === core else { return false }
            entry.handles -= 1
            if entry.handles > 0 {
                entries[core.path] = entry
                return false
            }
            entry.isClosing = true
            entries[core.path] = entry
            return true
        }
        guard isLast else { return }
        // Only this thread's transactions could make the close wait on itself, and it holds none of this core.
        try? core.close()
        _ = entries.withLock { $0.removeValue(forKey: core.path) }
    }

    /// Closes one handle of `core`: `markClosed` runs once the handle is given up, and the last handle closes the
    /// environment first, after the transactions of other threads ended.
    ///
    /// - Throws: ``LMDBError/busy`` when this is the last handle and the calling thread is inside one of the
    ///   environment's transactions; the handle then stays open.
    static func close(_ core: EnvironmentCore, markClosed: () -> Void) throws(LMDBError) {
        let isLast = entries.withLock { entries -> Bool in
            guard var entry = entries[core.path], entry.core === core else { return false }
            if entry.handles > 1 {
                entry.handles -= 1
                entries[core.path] = entry
                return false
            }
            entry.isClosing = true
            entries[core.path] = entry
            return true
        }
        guard isLast else { return markClosed() }
        do {
            try core.close()
        } catch {
            entries.withLock { $0[core.path]?.isClosing = false }
            throw error
        }
        markClosed()
        _ = entries.withLock { $0.removeValue(forKey: core.path) }
    }
}
