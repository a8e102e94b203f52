import Foundation

/// A connection that completed the handshake, ready to be installed.
struct Established {
    var socket: Socket
    var server: ServerAddress
    var info: ServerInfo
    var parser: ProtocolParser
}

extension ConnectionCore {
    // MARK: - Handshake

    /// Connects to `server` and runs the handshake: `INFO`, then `CONNECT` and `PING`, until the `PONG` that says
    /// the server accepted the connection.
    ///
    /// - Throws: ``NATSError/connectionFailed(server:reason:)`` (a `-ERR` included, such as an authorization
    ///   violation), ``NATSError/connectionClosed(reason:)`` when the connection was closed meanwhile.
    func handshake(with server: ServerAddress) throws -> Established {
        let name = server.description
        let deadline = ContinuousClock.now + options.connectTimeout
        let socket = try Socket.connect(
            host: server.host, port: server.port, timeout: options.connectTimeout, server: name)
        let closed = state.withLock { state -> String? in
            if state.status == .closed { return state.closeReason ?? "closed" }
            state.attemptSocket = socket
            return nil
        }
        if let closed {
            socket.close()
            throw NATSError.connectionClosed(reason: closed)
        }
        defer { state.withLock { state in state.attemptSocket = nil } }
        do {
            var parser = ProtocolParser()
            guard case .info(let json) = try readOperation(from: socket, parser: &parser, by: deadline, server: name)
            else { throw NATSError.connectionFailed(server: name, reason: "the server did not start with INFO") }
            var info = try Self.decodeInfo(json)
            if info.headers == false {
                throw NATSError.connectionFailed(
                    server: name, reason: "the server does not support headers (NATS 2.2 or later is needed)")
            }
            let connect = ConnectRequest(
                name: options.name, echo: options.echo, user: server.user ?? options.user,
                password: server.password ?? options.password, token: options.token)
            let request = try JSONEncoder().encode(connect)
            try socket.write(Array("CONNECT ".utf8) + Array(request) + Array("\r\nPING\r\n".utf8), server: name)
            while true {
                switch try readOperation(from: socket, parser: &parser, by: deadline, server: name) {
                case .pong:
                    return Established(socket: socket, server: server, info: info, parser: parser)
                case .error(let message):
                    throw NATSError.connectionFailed(server: name, reason: "the server refused it: -ERR '\(message)'")
                case .info(let json):
                    info = try Self.decodeInfo(json)
                case .ping:
                    try socket.write(Array("PONG\r\n".utf8), server: name)
                case .ok:
                    continue
                case .message:
                    throw NATSError.connectionFailed(server: name, reason: "the server sent a message before PONG")
                }
            }
        } catch {
            socket.close()
            throw error
        }
    }

    /// Reads until the parser has an operation, or `deadline` passes.
    private func readOperation(
        from socket: Socket, parser: inout ProtocolParser, by deadline: ContinuousClock.Instant, server: String
    ) throws -> ServerOperation {
        while true {
            if let operation = try parser.next() { return operation }
            let remaining = deadline - .now
            guard remaining > .zero else {
                throw NATSError.connectionFailed(
                    server: server, reason: "the handshake did not complete within \(options.connectTimeout)")
            }
            if try socket.read(into: &parser.buffer, timeout: remaining, server: server) == .closed {
                throw NATSError.connectionFailed(server: server, reason: "the server closed the connection")
            }
        }
    }

    static func decodeInfo(_ json: [UInt8]) throws -> ServerInfo {
        do {
            return try JSONDecoder().decode(ServerInfo.self, from: Data(json))
        } catch {
            throw NATSError.protocolError("INFO could not be decoded: \(error)")
        }
    }

    // MARK: - Establishing

    /// Tries the servers round after round, starting after the current one, until one completes the handshake,
    /// `deadline` passes, or the connection closes; pauses between rounds as the options say.
    ///
    /// - Parameter failures: Why the last attempt on each server failed, by server.
    func establish(deadline: ContinuousClock.Instant?, failures: inout [String: String]) -> Established? {
        var round = 0
        while true {
            let servers: [ServerAddress]? = state.withLock { state in
                if state.status == .closed { return nil }
                guard let current = state.current,
                    let index = state.servers.firstIndex(where: { $0.sameServer(as: current) })
                else { return state.servers }
                return Array(state.servers[(index + 1)...] + state.servers[...index])
            }
            guard let servers else { return nil }
            for server in servers {
                if let deadline, ContinuousClock.now >= deadline { return nil }
                do {
                    return try handshake(with: server)
                } catch let error as NATSError {
                    if case .connectionClosed = error { return nil }
                    failures[server.description] = "\(error)"
                } catch {
                    failures[server.description] = "\(error)"
                }
            }
            round += 1
            let base = options.reconnectWait * (1 << min(round - 1, 16))
            var pause = min(base, options.maximumReconnectWait)
            pause += pause * Double.random(in: 0..<0.25)
            var wake = ContinuousClock.now + pause
            if let deadline {
                if ContinuousClock.now >= deadline { return nil }
                wake = min(wake, deadline)
            }
            if state.wait(until: wake, { state in state.status == .closed ? true : nil }) != nil { return nil }
        }
    }

    /// Makes `established` the connection: a new epoch, the servers it announces, every subscription renewed ahead
    /// of what waited to be sent.
    ///
    /// - Returns: Whether it was installed; not when the connection was closed meanwhile.
    func install(_ established: Established) -> Bool {
        let discovered = state.withLockBroadcasting { state -> [String]? in
            if state.status == .closed { return nil }
            state.epoch += 1
            state.socket = established.socket
            state.current = established.server
            state.info = established.info
            let renewals = state.subscriptions.values.sorted { $0.sid < $1.sid }.flatMap(Self.subscribeLine)
            state.outbound = renewals + state.outbound
            for index in state.pongs.indices where state.pongs[index].epoch == nil {
                state.pongs[index].epoch = state.epoch
            }
            state.pingsOutstanding = 0
            state.status = .connected
            return discover(established.info, in: &state)
        }
        guard let discovered else {
            established.socket.close()
            return false
        }
        if !discovered.isEmpty { options.eventHandler?(.discoveredServers(discovered)) }
        return true
    }

    /// Adds the servers `info` announces to the list, and returns those that were new.
    private func discover(_ info: ServerInfo, in state: inout ConnectionState) -> [String] {
        guard options.discoversServers else { return [] }
        var added: [String] = []
        // An announced address has no credentials: it takes those of the address the connection was given first.
        let credentials = state.servers.first { $0.user != nil }
        for url in info.connectURLs ?? [] {
            guard var address = try? ServerAddress(parsing: url) else { continue }
            address.user = credentials?.user
            address.password = credentials?.password
            if !state.servers.contains(where: { $0.sameServer(as: address) }) {
                state.servers.append(address)
                added.append(address.description)
            }
        }
        return added
    }

    // MARK: - Threads

    /// Starts the reader and writer threads on an installed connection.
    func startThreads(with established: Established) {
        let reader = Thread { [self] in runReader(established) }
        reader.name = "NATS reader"
        let writer = Thread { [self] in runWriter() }
        writer.name = "NATS writer"
        state.withLock { state in
            state.runningThreads = 2
            state.readerThread = reader
        }
        reader.start()
        writer.start()
    }

    /// The reader thread: reads until the connection breaks, then reconnects, until the connection is closed.
    private func runReader(_ first: Established) {
        var connection = first
        while true {
            let reason = readLoop(&connection)
            let server = connection.server.description
            connection.socket.shutdown()
            let wasClosed = state.withLockBroadcasting { state -> Bool in
                state.socket = nil
                // Bytes not yet written were meant for the broken connection; a PING among them would make its
                // PONG answer the wrong waiter.
                state.outbound.removeAll(keepingCapacity: true)
                let epoch = state.epoch
                failPongs(
                    in: &state, where: { $0.epoch == epoch },
                    with: .connectionLost(server: server, reason: reason))
                state.pingsOutstanding = 0
                if state.status == .closed { return true }
                state.status = .reconnecting
                return false
            }
            _ = state.wait(until: nil) { state in state.writerBusy ? nil : () }
            connection.socket.close()
            if wasClosed { break }
            options.eventHandler?(.disconnected(server: server, reason: reason))
            guard options.reconnects else {
                close(reason: "the connection to \(server) was lost (\(reason)) and reconnection is off")
                break
            }
            var failures: [String: String] = [:]
            guard let next = establish(deadline: options.reconnectDeadline.map { .now + $0 }, failures: &failures)
            else {
                if closeReason == nil {
                    let attempts = failures.sorted { $0.key < $1.key }.map(\.value).joined(separator: "; ")
                    close(reason: "no server answered within the reconnect deadline (\(attempts))")
                }
                break
            }
            guard install(next) else {
                break
            }
            state.withLock { state in state.reconnections += 1 }
            options.eventHandler?(.reconnected(server: next.server.description))
            connection = next
        }
        state.withLockBroadcasting { state in state.runningThreads -= 1 }
    }

    /// Reads and handles operations, and sends heartbeats, until the connection breaks or closes.
    ///
    /// - Returns: Why it ended.
    private func readLoop(_ connection: inout Established) -> String {
        let server = connection.server.description
        var nextPing = ContinuousClock.now + options.pingInterval
        while true {
            do {
                while let operation = try connection.parser.next() { try handle(operation) }
            } catch {
                return "\(error)"
            }
            connection.parser.compact()
            if closeReason != nil { return "closed" }
            let wait = nextPing - .now
            if wait <= .zero {
                let limit = options.maximumPingsOutstanding
                let dead = state.withLockBroadcasting { state -> Bool in
                    if state.pingsOutstanding >= limit { return true }
                    state.pingsOutstanding += 1
                    state.pongs.append(.init(id: nil, epoch: state.epoch))
                    state.outbound += Array("PING\r\n".utf8)
                    return false
                }
                if dead { return "the server did not answer \(limit) PINGs sent \(options.pingInterval) apart" }
                nextPing = .now + options.pingInterval
                continue
            }
            do {
                let result = try connection.socket.read(into: &connection.parser.buffer, timeout: wait, server: server)
                if result == .closed { return "the server closed the connection" }
            } catch {
                return "\(error)"
            }
        }
    }

    /// Handles one operation of an established connection.
    private func handle(_ operation: ServerOperation) throws {
        switch operation {
        case .message(let message, let sid):
            let subscription = state.withLock { state in state.subscriptions[sid] }
            subscription?.deliver(message)
        case .ping:
            state.withLockBroadcasting { state in state.outbound += Array("PONG\r\n".utf8) }
        case .pong:
            state.withLockBroadcasting { state in
                state.pingsOutstanding = 0
                guard !state.pongs.isEmpty else { return }
                let pong = state.pongs.removeFirst()
                if let id = pong.id, state.abandonedPongs.remove(id) == nil { state.pongResults[id] = .success(()) }
            }
        case .ok:
            break
        case .error(let message):
            state.withLock { state in state.lastServerError = message }
            options.eventHandler?(.serverError(message))
        case .info(let json):
            let info = try Self.decodeInfo(json)
            let discovered = state.withLock { state in
                state.info = info
                return discover(info, in: &state)
            }
            if !discovered.isEmpty { options.eventHandler?(.discoveredServers(discovered)) }
        }
    }

    /// The writer thread: sends the outbound buffer whenever it has bytes and the connection is up.
    private func runWriter() {
        while true {
            let work: (Socket, [UInt8], Int, String)?? = state.wait(until: nil) { state in
                if state.status == .closed { return .some(nil) }
                guard state.status == .connected, let socket = state.socket, !state.outbound.isEmpty else {
                    return nil
                }
                let bytes = state.outbound
                state.outbound = []
                state.writerBusy = true
                return (socket, bytes, state.epoch, state.current?.description ?? "the server")
            }
            guard let (socket, bytes, epoch, server) = work ?? nil else { break }
            var failed = false
            do {
                try socket.write(bytes, server: server)
            } catch {
                failed = true
            }
            state.withLockBroadcasting { state in
                state.writerBusy = false
                // The reader sees the shut-down socket, and reconnects.
                if failed && state.epoch == epoch { state.socket?.shutdown() }
            }
        }
        state.withLockBroadcasting { state in state.runningThreads -= 1 }
    }
}
