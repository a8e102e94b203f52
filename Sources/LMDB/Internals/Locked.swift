#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value that threads share behind a POSIX mutex.
///
/// The package uses this rather than `Synchronization.Mutex`: on Linux that mutex is built on futexes inside the
/// standard library, which ThreadSanitizer cannot see, so every sanitizer run reported races on state the mutex
/// protected. ThreadSanitizer intercepts `pthread_mutex_lock`, so this lock keeps those runs meaningful. Uncontended,
/// both cost about the same.
///
/// `@safe`: the mutex is allocated with the instance and destroyed in `deinit`, and `value` is reached only while it
/// is held.
@safe
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written between pthread_mutex_lock and pthread_mutex_unlock.
    // Do not lock a zero-sized value (`Locked<Void>`): ThreadSanitizer then reports its accesses at the object's own
    // address and takes them for races; lock a counter instead.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// `@exclusivity(unchecked)`: the mutex already makes every access exclusive, and a run-time check of each one
    /// costs more than the lock. (A `withLock` nested in its own body would deadlock before any check could fire.)
    @exclusivity(unchecked) private var value: Value

    /// Creates a lock around `value`.
    package init(_ value: Value) {
        unsafe mutex = .allocate(capacity: 1)
        unsafe self.value = value
        // Default attributes cannot fail to initialize a mutex.
        unsafe pthread_mutex_init(mutex, nil)
    }

    deinit {
        unsafe pthread_mutex_destroy(mutex)
        unsafe mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        unsafe pthread_mutex_lock(mutex)
        defer { unsafe pthread_mutex_unlock(mutex) }
        return try unsafe body(&value)
    }
}
