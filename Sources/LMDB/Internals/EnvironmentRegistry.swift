import CLMDB

/// The process-wide table of open environments, one per canonical path.
///
/// LMDB forbids opening one environment twice in a process: POSIX file locks belong to the process, so closing the
/// second handle would release the first one's locks. The registry hands out the environment that is already open,
/// and it keeps the handle through the gap between an environment's last reference going away and its `deinit`
/// closing the handle: an `open` in that gap adopts the handle instead of opening the file a second time. Every
/// adoption bumps the entry's generation, and only the environment of the current generation closes the handle.
enum EnvironmentRegistry {
    /// An open environment, by canonical path.
    struct Entry {
        weak var environment: Environment?
        let handle: UnsafeHandle
        let configuration: Environment.Configuration
        let generation: UInt64
    }

    /// An `MDB_env` pointer that can sit in the registry.
    ///
    /// `@unchecked Sendable`: LMDB environments are thread-safe (`MDB_NOTLS` is always set), and the registry only
    /// stores and hands the pointer back under its lock.
    struct UnsafeHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var nextGeneration: UInt64 = 1
    }

    private static let state = Locked(State())

    /// Returns the environment open at `path`, adopting a handle whose environment is being deinitialized, or calls
    /// `open` to open a new handle, all under the registry's lock so that two threads never open one path twice.
    static func environment(
        at path: String,
        configuration: Environment.Configuration,
        open: (String) throws(LMDBError) -> OpaquePointer
    ) throws(LMDBError) -> Environment {
        try state.withLock { state throws(LMDBError) -> Environment in
            let generation = state.nextGeneration
            state.nextGeneration += 1
            if let entry = state.entries[path] {
                if let environment = entry.environment {
                    if environment.configuration.options.contains(.readOnly)
                        && !configuration.options.contains(.readOnly)
                    {
                        throw LMDBError(
                            code: LMDBError.accessDenied.code, operation: "open", path: path,
                            detail: "The environment is already open read-only in this process"
                        )
                    }
                    return environment
                }
                let adopted = Environment(
                    handle: entry.handle.pointer, path: path, configuration: entry.configuration,
                    generation: generation)
                state.entries[path] = Entry(
                    environment: adopted, handle: entry.handle, configuration: entry.configuration,
                    generation: generation)
                return adopted
            }
            let handle = try open(path)
            let environment = Environment(
                handle: handle, path: path, configuration: configuration, generation: generation)
            state.entries[path] = Entry(
                environment: environment, handle: UnsafeHandle(pointer: handle), configuration: configuration,
                generation: generation)
            return environment
        }
    }

    /// Removes the entry for `path` and closes its handle, if the entry still belongs to `generation`.
    ///
    /// The handle is closed under the registry's lock, so no `open` of the same path can slip in between and find the
    /// file open twice.
    ///
    /// - Returns: Whether the handle was closed here.
    @discardableResult
    static func close(path: String, generation: UInt64) -> Bool {
        state.withLock { state in
            guard let entry = state.entries[path], entry.generation == generation else { return false }
            state.entries[path] = nil
            mdb_env_close(entry.handle.pointer)
            return true
        }
    }
}
