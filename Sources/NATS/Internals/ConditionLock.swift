#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value that threads share behind a POSIX mutex, with a condition variable to wait for it to change.
///
/// The module has its own lock rather than the package's `Locked` (it depends on nothing of the package), built the
/// same way and for the same reason: ThreadSanitizer intercepts `pthread_mutex_lock`, not the futexes inside
/// `Synchronization.Mutex`. The condition variable measures its timeouts on `CLOCK_MONOTONIC`, so a change of the
/// wall clock neither shortens nor stretches a wait.
///
/// `@safe`: the mutex and condition are allocated with the instance and destroyed in `deinit`, and `value` is reached
/// only while the mutex is held (invariant: every access goes through `withLock` or `wait`, which hold it).
@safe
final class ConditionLock<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written between pthread_mutex_lock and pthread_mutex_unlock.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    /// Creates a lock around `value`.
    init(_ value: Value) {
        unsafe mutex = .allocate(capacity: 1)
        unsafe condition = .allocate(capacity: 1)
        self.value = value
        // Default attributes cannot fail to initialize a mutex; the condition's attributes only select the clock.
        unsafe pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        unsafe pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
            unsafe pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        unsafe pthread_cond_init(condition, &attributes)
        unsafe pthread_condattr_destroy(&attributes)
    }

    deinit {
        unsafe pthread_cond_destroy(condition)
        unsafe pthread_mutex_destroy(mutex)
        unsafe condition.deallocate()
        unsafe mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        unsafe pthread_mutex_lock(mutex)
        defer { unsafe pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with exclusive access to the value, then wakes every thread waiting on the condition.
    func withLockBroadcasting<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        unsafe pthread_mutex_lock(mutex)
        defer {
            unsafe pthread_cond_broadcast(condition)
            unsafe pthread_mutex_unlock(mutex)
        }
        return try body(&value)
    }

    /// Wakes every thread waiting on the condition.
    func broadcast() {
        unsafe pthread_mutex_lock(mutex)
        unsafe pthread_cond_broadcast(condition)
        unsafe pthread_mutex_unlock(mutex)
    }

    /// Waits until `body` returns a value, or `deadline` passes, and returns what `body` returned last (`nil` on
    /// timeout).
    ///
    /// `body` runs under the lock, first at once and then each time another thread changes the value through
    /// ``withLockBroadcasting(_:)``; it may change the value too.
    func wait<R>(until deadline: ContinuousClock.Instant?, _ body: (inout Value) -> R?) -> R? {
        unsafe pthread_mutex_lock(mutex)
        defer { unsafe pthread_mutex_unlock(mutex) }
        while true {
            if let result = body(&value) { return result }
            guard let deadline else {
                unsafe pthread_cond_wait(condition, mutex)
                continue
            }
            let remaining = deadline - .now
            if remaining <= .zero { return nil }
            var time = timespec()
            #if canImport(Darwin)
                unsafe clock_gettime(CLOCK_REALTIME, &time)
            #else
                unsafe clock_gettime(CLOCK_MONOTONIC, &time)
            #endif
            let (seconds, attoseconds) = remaining.components
            // Round up to a microsecond so that the wait does not end just before the deadline and spin.
            let nanoseconds = Int(time.tv_nsec) + Int(attoseconds / 1_000_000_000) + 1_000
            time.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
            time.tv_nsec = nanoseconds % 1_000_000_000
            unsafe pthread_cond_timedwait(condition, mutex, &time)
        }
    }
}
