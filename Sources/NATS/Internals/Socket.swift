#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connected TCP socket: the module's only system calls on the network.
///
/// `@safe`: every pointer handed to the C library points into a buffer that lives across the call (a local, or an
/// array lent by `withUnsafe…` for the call's duration), and each length passed is that buffer's (invariant). The
/// descriptor is closed once, by ``close()``; ``shutdown()`` may be called from another thread meanwhile, to wake a
/// thread blocked in ``read(into:timeout:)`` or ``write(_:)``.
@safe
struct Socket: Sendable {
    /// The file descriptor.
    let descriptor: Int32

    /// What a read returned.
    enum ReadResult {
        /// Bytes were appended to the buffer.
        case data
        /// The timeout passed with nothing to read.
        case timedOut
        /// The peer closed the connection.
        case closed
    }

    /// Connects to `host`:`port` over TCP, trying each address the name resolves to, within `timeout`.
    ///
    /// - Throws: ``NATSError/connectionFailed(server:reason:)`` when the name does not resolve, or no address accepts
    ///   the connection in time.
    static func connect(host: String, port: Int, timeout: Duration, server: String) throws -> Socket {
        var hints = unsafe addrinfo()
        unsafe hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            unsafe hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            unsafe hints.ai_socktype = SOCK_STREAM
        #endif
        unsafe hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = unsafe getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = unsafe list else {
            let message = unsafe String(cString: gai_strerror(status))
            throw NATSError.connectionFailed(server: server, reason: "cannot resolve '\(host)': \(message)")
        }
        defer { unsafe freeaddrinfo(first) }
        var lastReason = "no address for '\(host)'"
        var entry: UnsafeMutablePointer<addrinfo>? = unsafe first
        let deadline = ContinuousClock.now + timeout
        while let current = unsafe entry {
            unsafe entry = current.pointee.ai_next
            let descriptor = unsafe socket(current.pointee.ai_family, current.pointee.ai_socktype, 0)
            guard descriptor >= 0 else {
                lastReason = "socket: \(Self.errorText(errno))"
                continue
            }
            let socket = Socket(descriptor: descriptor)
            do {
                try unsafe socket.connect(to: current.pointee.ai_addr, length: current.pointee.ai_addrlen, by: deadline)
                try socket.configure()
                return socket
            } catch {
                socket.close()
                lastReason = error.reason
            }
        }
        throw NATSError.connectionFailed(server: server, reason: lastReason)
    }

    /// Connects the socket to `address` without blocking past `deadline`, then makes it blocking again.
    @unsafe
    private func connect(
        to address: UnsafePointer<sockaddr>?, length: socklen_t, by deadline: ContinuousClock.Instant
    ) throws(SocketFailure) {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        if unsafe systemConnect(descriptor, address, length) != 0 {
            guard errno == EINPROGRESS else { throw SocketFailure(reason: "connect: \(Self.errorText(errno))") }
            var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            while true {
                let result = unsafe poll(&ready, 1, Self.milliseconds(until: deadline))
                if result > 0 { break }
                if result == 0 { throw SocketFailure(reason: "the connection did not complete in time") }
                if errno != EINTR { throw SocketFailure(reason: "poll: \(Self.errorText(errno))") }
            }
            var failure: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            _ = unsafe getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &size)
            if failure != 0 { throw SocketFailure(reason: "connect: \(Self.errorText(failure))") }
        }
        _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
    }

    /// Sets TCP_NODELAY, since the protocol's small requests wait for their replies.
    private func configure() throws(SocketFailure) {
        var one: Int32 = 1
        guard
            unsafe setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                == 0
        else { throw SocketFailure(reason: "setsockopt TCP_NODELAY: \(Self.errorText(errno))") }
    }

    /// Waits up to `timeout` for bytes and appends what arrived to `buffer` (at most 64 KiB at a time).
    ///
    /// - Throws: ``NATSError/connectionLost(server:reason:)`` naming `server` when the system call fails.
    func read(into buffer: inout [UInt8], timeout: Duration, server: String) throws -> ReadResult {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let polled = unsafe poll(&ready, 1, Self.milliseconds(until: .now + timeout))
        if polled == 0 { return .timedOut }
        if polled < 0 {
            if errno == EINTR { return .timedOut }
            throw NATSError.connectionLost(server: server, reason: "poll: \(Self.errorText(errno))")
        }
        // Received into an array of its own, then appended whole: appending a sequence of zeros first and writing
        // over them went element by element through unspecialized generic code in debug builds, and took seconds
        // per megabyte under ThreadSanitizer.
        let chunk = 65_536
        var count = 0
        var failure: Int32 = 0
        let received = unsafe [UInt8](unsafeUninitializedCapacity: chunk) { bytes, initialized in
            count = unsafe recv(descriptor, bytes.baseAddress, chunk, 0)
            failure = errno
            initialized = max(count, 0)
        }
        if count > 0 {
            buffer.append(contentsOf: received)
            return .data
        }
        if count == 0 { return .closed }
        if failure == EINTR || failure == EAGAIN { return .timedOut }
        throw NATSError.connectionLost(server: server, reason: "recv: \(Self.errorText(failure))")
    }

    /// Writes all of `bytes`, blocking until the kernel took them.
    ///
    /// - Throws: ``NATSError/connectionLost(server:reason:)`` naming `server` when the connection breaks.
    func write(_ bytes: [UInt8], server: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = unsafe bytes.withUnsafeBytes { buffer in
                unsafe send(
                    descriptor, buffer.baseAddress.map { unsafe $0 + offset }, buffer.count - offset,
                    Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw NATSError.connectionLost(server: server, reason: "send: \(Self.errorText(errno))")
            }
            offset += written
        }
    }

    /// Shuts both directions down, which wakes a thread blocked reading or writing; the descriptor stays open.
    func shutdown() {
        _ = systemShutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Closes the descriptor.
    func close() {
        _ = systemClose(descriptor)
    }

    /// The milliseconds from now until `deadline`, for `poll`: at least 0, rounded up.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let remaining = deadline - .now
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    /// The text of an `errno` value, such as "Connection refused".
    static func errorText(_ code: Int32) -> String {
        unsafe String(cString: strerror(code))
    }
}

/// Why a connection attempt to one address failed, as a sentence.
struct SocketFailure: Error {
    let reason: String
}

// The C library's `connect`, `shutdown` and `close`, which `Socket`'s own methods of those names hide: the calls name
// the C library's module, which differs between Glibc, Musl and Darwin.

/// `connect(2)`.
@unsafe
private func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    #if canImport(Glibc)
        unsafe Glibc.connect(descriptor, address, length)
    #elseif canImport(Musl)
        unsafe Musl.connect(descriptor, address, length)
    #elseif canImport(Darwin)
        unsafe Darwin.connect(descriptor, address, length)
    #endif
}

/// `shutdown(2)`.
private func systemShutdown(_ descriptor: Int32, _ how: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.shutdown(descriptor, how)
    #elseif canImport(Musl)
        Musl.shutdown(descriptor, how)
    #elseif canImport(Darwin)
        Darwin.shutdown(descriptor, how)
    #endif
}

/// `close(2)`.
private func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(descriptor)
    #elseif canImport(Musl)
        Musl.close(descriptor)
    #elseif canImport(Darwin)
        Darwin.close(descriptor)
    #endif
}
