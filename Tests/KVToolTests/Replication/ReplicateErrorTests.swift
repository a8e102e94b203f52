import Foundation
import KVStore
import NATSTestSupport
import Testing

/// The errors of the `replicate-*` commands, pinned: each says what is wrong and what to do, exit status 1, and
/// leaves the stores as they were.
@Suite(.requiresNATSServer, .serialized)
struct ReplicateErrorTests {
    @Test func aMissingStoreIsRefusedAndNothingIsCreated() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let missing = setup.sibling("missing")
            for (command, more) in [("publish", ["--once"]), ("follow", ["--once"]), ("status", [])] {
                #expect(
                    kvtool(arguments: ["replicate-\(command)", missing] + setup.connection + more)
                        == RunResult(
                            status: 1, output: "", errors: "Error: No such store: '\(missing)' does not exist\n"),
                    "\(command)")
                #expect(!FileManager.default.fileExists(atPath: missing), "\(command) created '\(missing)'")
            }
            // A directory without a store stays empty.
            let empty = setup.sibling("empty")
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
            #expect(
                setup.replicate("follow", empty, "--once")
                    == RunResult(
                        status: 1, output: "",
                        errors: "Error: '\(empty)' is not a store: the directory holds no data.mdb\n"
                    ))
            #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        }
    }

    @Test func aStoreWithoutHistoryIsRefused() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let store = setup.sibling("no-history")
            try Sample.makeStore(at: store)
            let message =
                "Error: '\(store)' records no change history, which replication ships: the primary's program switches it "
                + "on with ModelContainer.enableHistory(retention:), and a replica is a copy of such a primary\n"
            for command in ["publish", "follow"] {
                #expect(setup.replicate(command, store, "--once") == RunResult(status: 1, output: "", errors: message))
            }
        }
    }

    @Test func anUnreachableServerFailsWithinTheConnectTimeout() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let port = try NATSServer.freePort()
            let started = ContinuousClock.now
            let result = kvtool(
                "replicate-publish", setup.primary.path, "--server", "nats://127.0.0.1:\(port)", "--stream", "ORDERS",
                "--once", "--connect-timeout", "1")
            #expect(ContinuousClock.now - started < .seconds(8), "the default deadline is 10 seconds")
            #expect(result.status == 1)
            #expect(result.output == "")
            #expect(
                result.errors.hasPrefix(
                    "Error: No NATS server answered within 1.0 seconds (servers: nats://127.0.0.1:\(port)). Attempts: ")
            )
            #expect(
                result.errors.hasSuffix(
                    " Check that a server runs at one of these addresses and accepts this client's credentials.\n"))
        }
    }

    @Test func aServerWithoutJetStreamIsNamed() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let server = try NATSServer(jetStream: false)
            let result = kvtool(
                "replicate-publish", setup.primary.path, "--server", server.url, "--stream", "ORDERS", "--once")
            #expect(
                result
                    == RunResult(
                        status: 1, output: "",
                        errors: "Error: JetStream does not answer (no responder on '$JS.API.STREAM.INFO.ORDERS'): the "
                            + "server runs without JetStream (start it with -js), or this client may not use it\n"))
        }
    }

    @Test func anUnknownStreamIsRefusedUnlessCreated() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let replica = try setup.copyOfPrimary(named: "replica")
            #expect(
                setup.replicate("publish", setup.primary.path, "--once")
                    == RunResult(
                        status: 1, output: "",
                        errors: "Error: There is no stream 'ORDERS' on \(setup.server.url). Create it with "
                            + "--create-stream, or give the name of the stream the replicas follow\n"))
            #expect(
                setup.replicate("follow", replica, "--once")
                    == RunResult(
                        status: 1, output: "",
                        errors: "Error: There is no stream 'ORDERS' on \(setup.server.url). Check its name: the "
                            + "primary's 'kvtool replicate-publish --create-stream' creates it\n"))
            // The copy did not become a replica: it may still follow another stream.
            #expect(
                setup.replicate("status", replica).errors
                    == "Error: '\(replica)' is not a replica: 'kvtool replicate-follow' makes a copy of the primary a "
                    + "replica of the stream 'ORDERS'\n")
        }
    }

    @Test func thePrimaryCannotFollowItsOwnStream() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            #expect(setup.replicate("publish", setup.primary.path, "--create-stream", "--once").status == 0)
            #expect(
                setup.replicate("follow", setup.primary.path, "--once")
                    == RunResult(
                        status: 1, output: "",
                        errors:
                            "Error: '\(setup.primary.path)' is not a replica yet, and has a lock file: a program has "
                            + "opened it, so it may be the primary itself, which following would turn into a read-only "
                            + "replica. A replica starts as a copy of the primary that nothing has opened yet: 'kvtool "
                            + "copy <primary> <directory>' makes one (a copy made otherwise qualifies once its lock.mdb "
                            + "is removed, while no program has it open)\n"))
            // The primary still takes its program's writes, and publishes them.
            try setup.commit(1)
            #expect(
                setup.replicate("publish", setup.primary.path, "--once").output
                    == "Published 1 message to the stream 'ORDERS', through \(setup.token(3)).\n")
        }
    }

    @Test func aReplicaDoesNotPublishNorFollowAnotherStream() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let replica = try setup.copyOfPrimary(named: "replica")
            #expect(setup.replicate("publish", setup.primary.path, "--create-stream", "--once").status == 0)
            #expect(setup.replicate("follow", replica, "--once").status == 0)
            #expect(
                setup.replicate("publish", replica, "--once")
                    == RunResult(
                        status: 1, output: "",
                        errors:
                            "Error: '\(replica)' is a replica of the stream 'ORDERS': only its primary publishes the "
                            + "history. Publish from the primary's store\n"))
            for command in ["follow", "status"] {
                #expect(
                    kvtool("replicate-\(command)", replica, "--server", setup.server.url, "--stream", "INVOICES")
                        == RunResult(
                            status: 1, output: "",
                            errors:
                                "Error: '\(replica)' is a replica of the stream 'ORDERS', not of 'INVOICES'. A replica "
                                + "of 'INVOICES' starts as a copy of its primary ('kvtool copy <primary> <directory>')\n"
                        ))
            }
        }
    }

    @Test func aStreamThatDoesNotCaptureTheSubjectIsRefused() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            #expect(
                setup.replicate(
                    "publish", setup.primary.path, "--create-stream", "--once", "--subject", "orders.history"
                )
                .status == 0)
            #expect(
                setup.replicate("publish", setup.primary.path, "--once")
                    == RunResult(
                        status: 1, output: "",
                        errors: "Error: The stream 'ORDERS' captures orders.history, not kvstore.history.ORDERS: give "
                            + "the subject it captures with --subject\n"))
        }
    }

    @Test func usageMistakesAreFoundBeforeAnythingIsOpened() async throws {
        try await offPool {
            let publishUsage = """
                Usage: kvtool replicate-publish <path> --server <url> ... --stream <name>
                                                [--connect-timeout <seconds>] [--subject <subject>]
                                                [--create-stream] [--replicas <n>] [--once]
                  See 'kvtool help replicate-publish' for more information.

                """
            #expect(
                kvtool("replicate-publish", "/no/such/store", "--stream", "ORDERS")
                    == RunResult(
                        status: 64, output: "",
                        errors: "Error: Missing expected option '--server <url>'\n" + publishUsage))
            #expect(
                kvtool(
                    "replicate-publish", "/no/such/store", "--server", "localhost", "--stream", "ORDERS", "--replicas",
                    "3")
                    == RunResult(
                        status: 64, output: "",
                        errors: "Error: --replicas applies only with --create-stream\n" + publishUsage))
            #expect(
                kvtool("replicate-follow", "/no/such/store", "--server", "localhost", "--stream", "ORD.ERS").errors
                    .hasPrefix(
                        "Error: The value 'ORD.ERS' is invalid for '--stream <name>': expected a JetStream stream name: "
                            + "not empty, without white space, '.', '*', '>', '/' or '\\'\n"))
            #expect(
                kvtool("replicate-status", "/no/such/store", "--server", "localhost").errors
                    .hasPrefix("Error: Missing expected option '--stream <name>'\n"))
        }
    }
}
