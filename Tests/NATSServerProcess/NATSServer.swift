import Foundation
import NATS
import Synchronization

/// A `nats-server` process for a test or a benchmark: started on a free loopback port with a fresh store directory,
/// ready once it logs that it is, and killed by its PID when its owner lets go of it (when a test fails too) or
/// calls ``stop()``.
public final class NATSServer: @unchecked Sendable {
    // @unchecked Sendable: `process` is only started, signalled and waited for, which Process allows from any thread;
    // `stopped` sits behind a lock.
    /// The server's name.
    public let name: String
    /// Its client port.
    public let port: Int
    /// Its route port, in a cluster.
    public let clusterPort: Int?
    /// Its directory: the JetStream store and the log.
    public let directory: URL
    private let process: Process
    private let stopped = NSLock()
    private var isStopped = false

    /// The client address, `nats://127.0.0.1:<port>`.
    public var url: String {
        "nats://127.0.0.1:\(port)"
    }

    /// The server's process ID.
    public var pid: Int32 {
        process.processIdentifier
    }

    /// Where the server writes its log.
    public var logFile: URL {
        directory.appendingPathComponent("server.log")
    }

    /// The `nats-server` executable: `$NATS_SERVER`, or the first in `$PATH`.
    public static let executable: String? = {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["NATS_SERVER"], FileManager.default.isExecutableFile(atPath: path) { return path }
        let directories = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin") + ":/usr/sbin:/sbin"
        for directory in directories.split(separator: ":") {
            let candidate = "\(directory)/nats-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    /// Whether a missing server fails the tests rather than skipping them: under CI (`CI` set and not empty).
    public static let isRequired = !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty

    /// Why starting a server failed.
    public struct StartError: Error, CustomStringConvertible {
        /// What failed.
        public let description: String

        /// Whether the server could not bind a port because something else had taken it.
        var isAddressInUse: Bool {
            description.contains("address already in use")
        }
    }

    /// Starts a server.
    ///
    /// - Parameters:
    ///   - name: The server's name (`server_name`), which a JetStream cluster needs to be unique.
    ///   - jetStream: Whether JetStream is on.
    ///   - configuration: A configuration file's text, for what has no flag (users, permissions, max_payload).
    ///   - port: The client port, or `nil` for a free one.
    ///   - cluster: The cluster's name, this server's route port and the other members' route ports.
    public init(
        name: String = "test", jetStream: Bool = true, configuration: String? = nil, port: Int? = nil,
        cluster: (name: String, port: Int, routes: [Int])? = nil
    ) throws {
        guard let executable = Self.executable else {
            throw StartError(
                description: "nats-server is not installed (searched $NATS_SERVER, $PATH, /usr/sbin and /sbin):"
                    + " `make deps` installs it (Debian's nats-server package)")
        }
        self.name = name
        self.clusterPort = cluster?.port
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "nats-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let logFile = directory.appendingPathComponent("server.log")
        // A port picked free may be taken before the server binds it (another test's connection takes its source port
        // from the same range): a start that fails so picks another and starts again, when the port is this init's
        // to pick and the server is alone (a cluster picks all its ports again, see `NATSCluster`).
        var attempt = 0
        while true {
            attempt += 1
            let chosen = try port ?? Self.freePort()
            var arguments = ["-a", "127.0.0.1", "-p", String(chosen), "-n", name]
            if jetStream { arguments += ["-js", "-sd", directory.appendingPathComponent("store").path] }
            if let configuration {
                let file = directory.appendingPathComponent("server.conf")
                try configuration.write(to: file, atomically: true, encoding: .utf8)
                arguments += ["-c", file.path]
            }
            if let cluster {
                arguments += ["--cluster_name", cluster.name, "--cluster", "nats://127.0.0.1:\(cluster.port)"]
                if !cluster.routes.isEmpty {
                    arguments += ["--routes", cluster.routes.map { "nats://127.0.0.1:\($0)" }.joined(separator: ",")]
                }
            }
            let process = Process()
            do {
                try Self.launch(process, executable: executable, arguments: arguments, logFile: logFile)
                self.port = chosen
                self.process = process
                return
            } catch let error as StartError where error.isAddressInUse && port == nil && cluster == nil && attempt < 5 {
                continue
            }
        }
    }

    /// Runs `process` with its output in `logFile` (made empty) and waits until the server is ready; kills it when
    /// it is not.
    private static func launch(_ process: Process, executable: String, arguments: [String], logFile: URL) throws {
        guard FileManager.default.createFile(atPath: logFile.path, contents: nil) else {
            throw StartError(description: "cannot create \(logFile.path)")
        }
        let log = try FileHandle(forWritingTo: logFile)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try log.close()
        do {
            try waitUntilReady(process, logFile: logFile, timeout: .seconds(10))
        } catch {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            throw error
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Waits until the server `process` runs says in `logFile` that it is ready for clients.
    private static func waitUntilReady(_ process: Process, logFile: URL, timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !process.isRunning {
                throw StartError(description: "nats-server exited at start-up:\n\(logTail(of: logFile))")
            }
            // The server logs this once it listens for clients (and, in a cluster, once its routes are set up).
            if let log = try? String(contentsOf: logFile, encoding: .utf8), log.contains("Server is ready") { return }
            usleep(10_000)
        }
        throw StartError(
            description: "nats-server did not accept connections within \(timeout):\n\(logTail(of: logFile))")
    }

    /// The last lines of the server's log, for failure messages.
    public func logTail(lines: Int = 20) -> String {
        Self.logTail(of: logFile, lines: lines)
    }

    /// The last `lines` lines of the log `logFile`.
    private static func logTail(of logFile: URL, lines: Int = 20) -> String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// Kills the server with SIGKILL and waits for it to end; again does nothing.
    public func stop() {
        stopped.lock()
        defer { stopped.unlock() }
        guard !isStopped else { return }
        isStopped = true
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Freezes the server (SIGSTOP): its sockets stay open but nothing answers. Returns once the process is stopped.
    public func pause() {
        kill(process.processIdentifier, SIGSTOP)
        waitForState { $0 == "T" }
    }

    /// Thaws a frozen server (SIGCONT). Returns once the process runs again.
    public func resume() {
        kill(process.processIdentifier, SIGCONT)
        waitForState { $0 != "T" }
    }

    /// Waits (up to 5 s) until the process's state in `/proc/<pid>/stat` satisfies `matches`: signals arrive
    /// asynchronously.
    private func waitForState(_ matches: (Character) -> Bool) {
        let path = "/proc/\(process.processIdentifier)/stat"
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            // The state follows the command's closing parenthesis: "1234 (nats-server) T ...".
            if let stat = try? String(contentsOfFile: path, encoding: .utf8), let close = stat.lastIndex(of: ")"),
                let state = stat[stat.index(after: close)...].first(where: { $0 != " " }), matches(state)
            {
                return
            }
            usleep(1_000)
        }
    }

    /// A TCP port nothing listens on now: the kernel's pick for a socket bound to port 0.
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw StartError(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw StartError(description: "bind: \(String(cString: strerror(errno)))") }
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw StartError(description: "getsockname: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Three `nats-server`s routed into one JetStream cluster, each with its own store.
public final class NATSCluster: Sendable {
    /// The servers, `node-0` first.
    public let servers: [NATSServer]

    /// Starts the three servers, `node-0` to `node-2`.
    ///
    /// The route ports are picked free before the first server starts, and one may be taken by then (the servers'
    /// own connections, and other tests', take their source ports from the same range): a server that cannot bind
    /// its route port stops the cluster's start, which picks the ports again, a few times.
    public init(name: String = "test-cluster", size: Int = 3) throws {
        servers = try Self.start(name: name, size: size)
    }

    private static func start(name: String, size: Int) throws -> [NATSServer] {
        var attempt = 0
        while true {
            attempt += 1
            do {
                let clusterPorts = try (0..<size).map { _ in try NATSServer.freePort() }
                var servers: [NATSServer] = []
                for index in 0..<size {
                    let routes = clusterPorts.enumerated().filter { $0.offset != index }.map(\.element)
                    servers.append(
                        try NATSServer(
                            name: "node-\(index)", cluster: (name: name, port: clusterPorts[index], routes: routes)))
                }
                return servers
            } catch let error as NATSServer.StartError where error.isAddressInUse && attempt < 5 {
                continue
            }
        }
    }

    /// The client addresses of every server.
    public var urls: [String] {
        servers.map(\.url)
    }

    /// The server named `name`.
    public func server(named name: String) -> NATSServer? {
        servers.first { $0.name == name }
    }
}
