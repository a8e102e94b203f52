import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A lock a process holds on its store while it migrates the schema or streams an external value in, which the kernel
/// releases when the process dies, however it dies.
///
/// These are open-file-description locks (`F_OFD_SETLK`, Linux) on single bytes of the store's `data.mdb`, far past
/// any data. LMDB takes no lock on the data file (its own locks are in `lock.mdb`), and an open-file-description lock
/// belongs to the descriptor that took it, not to the process: closing another descriptor of the file, as LMDB does,
/// leaves it held, and a second container of the store in the same process, with a descriptor of its own, sees it as
/// held too. No file is created for them, so a read-only look at a store (`kvtool check`) can test them without
/// writing anything.
///
/// A flag in the catalog could not do this: a migrating process killed part-way would leave it set for good, and a
/// process ID recorded there may belong to another process by the time it is read.
///
/// macOS has no open-file-description byte-range locks. There each lock is a `flock(2)` lock, which also belongs to
/// an open file description and is released when the process dies, on a file of its own in the store's
/// `kvstore-locks` directory, made when the lock is first taken (a lock never taken has no file, and a read-only look
/// only opens existing ones). CI builds and tests Linux only; built on Linux instead of the default, this variant
/// passed the migration, streaming, sharing and inspection tests, all but those that list a store directory's files
/// (which then hold `kvstore-locks` too).
///
/// One of the module's few places with unsafe code (ARCHITECTURE.md lists them), its system calls. Invariant: `open`
/// is a variadic C function, `fcntl` gets the address of a local `flock` that it fills in before it returns and keeps
/// nothing of, the paths given to `mkdir` and `unlink` are copied for the call, and the static message `strerror`
/// returns is copied into a `String` at once.
package struct StoreLock: Sendable {
    /// The byte of the data file a lock covers.
    let offset: Int64

    /// The first byte of the range the store's locks use: 2^62, beyond any data file LMDB can map.
    private static let base: Int64 = 1 << 62

    /// Held for a migration's whole duration, across its chunked transactions.
    package static let migration = StoreLock(offset: base)

    /// Held while a streamed external value whose staging entry names `token` is being written.
    package static func streamedValue(_ token: UInt32) -> StoreLock {
        StoreLock(offset: base + 1 + Int64(token))
    }

    /// A fresh token for a streamed value, random so that two writers never share one by chance.
    static func newStreamToken() -> UInt32 {
        UInt32.random(in: 0..<UInt32.max)
    }

    /// The error for a system call that failed with `code`.
    static func failure(_ action: String, _ code: Int32) -> KVStoreError {
        KVStoreError(.storage, message: "Cannot \(action): \(unsafe String(cString: strerror(code)))")
    }
}

#if os(Linux)
    extension StoreLock {
        /// Takes the lock, or returns `nil` when another descriptor (of this process or another one) holds it.
        ///
        /// - Parameter directory: The store's directory.
        /// - Returns: The held lock, released when it is deinitialized (or when the process dies).
        /// - Throws: ``KVStoreError/storage`` when the data file cannot be opened for writing or locked.
        func tryAcquire(in directory: String) throws -> HeldStoreLock? {
            let path = directory + "/data.mdb"
            let descriptor = unsafe open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                throw Self.failure("open \(path) to take a lock on it", errno)
            }
            var request = lockRequest(type: F_WRLCK)
            if unsafe fcntl(descriptor, Self.setLock, &request) == 0 {
                return HeldStoreLock(descriptor: descriptor)
            }
            let code = errno
            close(descriptor)
            if code == EAGAIN || code == EACCES { return nil }
            throw Self.failure("lock \(path)", code)
        }

        /// Whether any descriptor, of this process or another one, holds the lock.
        ///
        /// - Parameter descriptor: A descriptor of the store's data file, open for reading at least.
        /// - Throws: ``KVStoreError/storage`` when the lock cannot be tested.
        func isHeld(testingWith descriptor: Int32) throws -> Bool {
            var request = lockRequest(type: F_WRLCK)
            guard unsafe fcntl(descriptor, Self.getLock, &request) == 0 else {
                throw Self.failure("test a lock of the store's data file", errno)
            }
            return request.l_type != Int16(F_UNLCK)
        }

        private func lockRequest(type: Int32) -> flock {
            var request = flock()
            request.l_type = Int16(type)
            request.l_whence = Int16(SEEK_SET)
            request.l_start = off_t(offset)
            request.l_len = 1
            // Open-file-description locks require l_pid to be 0.
            request.l_pid = 0
            return request
        }

        // Linux's values, the same on every architecture; Glibc's module does not export them (they need _GNU_SOURCE).
        private static let getLock: Int32 = 36
        private static let setLock: Int32 = 37
    }

    /// A ``StoreLock`` this process holds; it is released when this value is deinitialized.
    final class HeldStoreLock: Sendable {
        private let descriptor: Int32

        fileprivate init(descriptor: Int32) {
            self.descriptor = descriptor
        }

        deinit {
            // Closing the descriptor releases its open-file-description locks.
            close(descriptor)
        }
    }

    /// A read-only descriptor of a store's data file, kept open to test its locks without opening the file each time.
    package final class StoreLockProbe: Sendable {
        private let descriptor: Int32

        /// Opens the data file of the store in `directory` for reading.
        ///
        /// - Throws: ``KVStoreError/storage`` when it cannot be opened.
        package init(directory: String) throws {
            let path = directory + "/data.mdb"
            descriptor = unsafe open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                throw KVStoreError(
                    .storage,
                    message: "Cannot open \(path) to test its locks: \(unsafe String(cString: strerror(errno)))")
            }
        }

        deinit {
            close(descriptor)
        }

        /// Whether any descriptor, of this process or another one, holds `lock`.
        ///
        /// - Throws: ``KVStoreError/storage`` when the lock cannot be tested.
        package func isHeld(_ lock: StoreLock) throws -> Bool {
            try lock.isHeld(testingWith: descriptor)
        }
    }
#else
    extension StoreLock {
        /// The lock's file: `kvstore-locks/migration`, or `kvstore-locks/stream-<token>` for a streamed value.
        private func path(in directory: String) -> String {
            let name = offset == Self.migration.offset ? "migration" : "stream-\(offset - Self.migration.offset - 1)"
            return Self.directory(in: directory) + "/" + name
        }

        /// The directory of the store's lock files.
        private static func directory(in directory: String) -> String {
            directory + "/kvstore-locks"
        }

        /// Takes the lock, or returns `nil` when another descriptor (of this process or another one) holds it.
        ///
        /// - Parameter directory: The store's directory.
        /// - Returns: The held lock, released when it is deinitialized (or when the process dies).
        /// - Throws: ``KVStoreError/storage`` when the lock file cannot be made, opened or locked.
        func tryAcquire(in directory: String) throws -> HeldStoreLock? {
            let locks = Self.directory(in: directory)
            if unsafe mkdir(locks, 0o700) != 0 && errno != EEXIST {
                throw Self.failure("make \(locks) for the store's locks", errno)
            }
            let path = path(in: directory)
            let descriptor = unsafe open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else {
                throw Self.failure("open \(path) to take a lock on it", errno)
            }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                // The migration lock's file stays: another process may have it open to take it next. A streamed
                // value's token is never taken again, so its file goes when the lock does.
                return HeldStoreLock(descriptor: descriptor, removing: offset == Self.migration.offset ? nil : path)
            }
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK { return nil }
            throw Self.failure("lock \(path)", code)
        }

        /// Whether any descriptor, of this process or another one, holds the lock of the store in `directory`.
        ///
        /// - Throws: ``KVStoreError/storage`` when the lock cannot be tested.
        func isHeld(inStore directory: String) throws -> Bool {
            let path = path(in: directory)
            let descriptor = unsafe open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                // A lock never taken has no file.
                if errno == ENOENT { return false }
                throw Self.failure("open \(path) to test its lock", errno)
            }
            defer { close(descriptor) }
            // A shared lock is granted unless the lock is held; it is given back at once.
            if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
                flock(descriptor, LOCK_UN)
                return false
            }
            let code = errno
            if code == EWOULDBLOCK { return true }
            throw Self.failure("test the lock \(path)", code)
        }
    }

    /// A ``StoreLock`` this process holds; it is released when this value is deinitialized.
    final class HeldStoreLock: Sendable {
        private let descriptor: Int32
        /// The lock's file, removed as the lock is released, for the locks never taken again.
        private let removing: String?

        fileprivate init(descriptor: Int32, removing: String?) {
            self.descriptor = descriptor
            self.removing = removing
        }

        deinit {
            if let removing { unsafe unlink(removing) }
            // Closing the descriptor releases its flock lock.
            close(descriptor)
        }
    }

    /// Tests the locks of a store, whose files are in its `kvstore-locks` directory.
    package final class StoreLockProbe: Sendable {
        private let directory: String

        /// Prepares to test the locks of the store in `directory`.
        ///
        /// - Throws: ``KVStoreError/storage`` when the store's data file cannot be opened, as on Linux, where the
        ///   locks are on that file.
        package init(directory: String) throws {
            let path = directory + "/data.mdb"
            let descriptor = unsafe open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                throw KVStoreError(
                    .storage,
                    message: "Cannot open \(path) to test its locks: \(unsafe String(cString: strerror(errno)))")
            }
            close(descriptor)
            self.directory = directory
        }

        /// Whether any descriptor, of this process or another one, holds `lock`.
        ///
        /// - Throws: ``KVStoreError/storage`` when the lock cannot be tested.
        package func isHeld(_ lock: StoreLock) throws -> Bool {
            try lock.isHeld(inStore: directory)
        }
    }
#endif
