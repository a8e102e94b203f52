// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "KVStore",
    // Foundation's Predicate needs macOS 14 and the Synchronization module's Atomic and Mutex macOS 15. CI builds and
    // tests Linux (Glibc) only; the Darwin branches of the imports and the Homebrew provider let the package build
    // where LMDB is installed, untested.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "KVStore", targets: ["KVStore"]),
        .library(name: "LMDB", targets: ["LMDB"]),
        // Checking a store from its path alone, as `kvtool check` does, from a program or a test.
        .library(name: "KVStoreInspection", targets: ["KVStoreInspection"]),
        // For the test targets of programs that use KVStore: in-memory containers with fixtures, expectations on the
        // changes of a unit of work, an observer that records. It imports Swift Testing, so a target that depends on
        // it links Swift Testing through it: only test targets should.
        .library(name: "KVStoreTesting", targets: ["KVStoreTesting"]),
        .executable(name: "kvtool", targets: ["kvtool"]),
        // The NATS client that replicas use to ship and read the change history through JetStream.
        .library(name: "NATS", targets: ["NATS"]),
        // Read replicas of a store on other machines: a publisher of the store's history to a JetStream stream, and
        // replicas that apply it.
        .library(name: "KVStoreReplication", targets: ["KVStoreReplication"]),
        // For the fuzz targets of Tools/fuzz, a package of its own that depends on this one; not for applications.
        .library(name: "KVToolCore", targets: ["KVToolCore"]),
    ],
    targets: [
        // Debian's liblmdb-dev (Homebrew's lmdb on macOS), found through pkg-config. `make deps` installs it.
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // CRC-32C with the SSE 4.2 instruction where the CPU has it (selected at run time through a function's target
        // attribute, so no compiler flags), for the checksums of records, external chunks and catalog entries.
        .target(name: "CCRC32C"),
        // Debian's libsqlite3-dev, found through pkg-config, for kvbench's raw SQLite side only. `make deps` installs
        // it.
        .systemLibrary(
            name: "CSQLite",
            path: "Benchmarks/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The safe binding: the only module that imports CLMDB, and free of Foundation.
        .target(
            name: "LMDB", dependencies: ["CLMDB"],
            swiftSettings: [
                .strictMemorySafety()
            ]),
        // The object store users import.
        .target(
            name: "KVStore", dependencies: ["LMDB", "CCRC32C"],
            swiftSettings: [
                .strictMemorySafety()
            ]),
        // A NATS client over POSIX sockets: core protocol with headers, heartbeats, reconnection across a cluster, and
        // JetStream's streams, acknowledged and pipelined publishing and pull consumers. Foundation only (JSON).
        .target(
            name: "NATS",
            swiftSettings: [
                .strictMemorySafety()
            ]),
        // The publisher of a store's history to a JetStream stream and the replica that applies it, through the
        // package-level parts of KVStore (the catalog, the history table, the derived indexes, external values) and
        // KVStoreInspection's reading of external-value descriptors.
        .target(
            name: "KVStoreReplication", dependencies: ["KVStore", "KVStoreInspection", "LMDB", "NATS"],
            swiftSettings: [
                .strictMemorySafety()
            ]),
        // The command-line kit of kvtool, kvbench and crashtest: options declared once and read back through their
        // declarations, one parser, one help layout, the same usage errors and exit statuses. Toolchain only.
        .target(name: "CommandLineKit", path: "Tools/CommandLineKit"),
        // What a store means to a reader without its program's types: opening a store from its path with its safety
        // and page checks, the integrity check (public API), record queries over the library's planner, records as
        // JSON. kvtool, crashtest and the tests use it.
        .target(name: "KVStoreInspection", dependencies: ["KVStore", "LMDB"]),
        // The test helpers of the KVStoreTesting product, on Swift Testing (`Issue.record`), which the toolchain
        // ships; LMDB gives it the package's `Locked`.
        .target(name: "KVStoreTesting", dependencies: ["KVStore", "LMDB"]),
        // The inspector's command line, a library so that its tests run it in-process: it parses options, calls
        // KVStoreInspection (and, for import and export, the library; for replicate-*, the replication module over a
        // NATS connection) and prints.
        .target(
            name: "KVToolCore",
            dependencies: ["KVStoreInspection", "KVStore", "LMDB", "CommandLineKit", "KVStoreReplication", "NATS"],
            path: "Tools/kvtool/Core"),
        // The inspector's executable: its main only calls KVToolCore.
        .executableTarget(name: "kvtool", dependencies: ["KVToolCore"], path: "Tools/kvtool/Main"),
        // The benchmark harness. It imports CLMDB and CSQLite directly: its baselines are the raw LMDB C API and the
        // raw SQLite C API.
        .executableTarget(
            name: "kvbench",
            dependencies: [
                "CLMDB", "CSQLite", "LMDB", "KVStore", "KVStoreReplication", "NATS", "NATSServerProcess",
                "CommandLineKit",
                "TestSupport",
            ],
            path: "Benchmarks/kvbench"),
        // The crash test: kills writer processes at random moments and checks the store (`make crashtest`) with the
        // integrity check of KVStoreInspection, in-process; it runs `kvtool readers` through KVToolCore.
        .executableTarget(
            name: "crashtest",
            dependencies: ["KVStore", "LMDB", "KVStoreInspection", "KVToolCore", "CommandLineKit", "TestSupport"],
            path: "Tools/crashtest"),
        // What the tests, crashtest and kvbench share: a seeded random generator, and the check that the Swift blocks
        // of README.md and of the DocC articles are the code the tests run. Foundation only.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB", "TestSupport"]),
        // Against real nats-server processes that the tests start on loopback ports (`make deps` installs it).
        .testTarget(name: "NATSTests", dependencies: ["NATS", "NATSTestSupport"]),
        // Starting and stopping nats-server processes and clusters, for the tests and kvbench's replication rows.
        .target(name: "NATSServerProcess", dependencies: ["NATS"], path: "Tests/NATSServerProcess"),
        // What the NATS and replication tests share on Swift Testing: the trait that needs nats-server, waiting.
        .target(name: "NATSTestSupport", dependencies: ["NATS", "NATSServerProcess"], path: "Tests/NATSTestSupport"),
        // Publisher and replicas against real nats-server processes, with child processes as primaries and replicas;
        // stores compared through kvtool export, run in-process.
        .testTarget(
            name: "KVStoreReplicationTests",
            dependencies: [
                "KVStoreReplication", "KVStore", "KVStoreInspection", "KVToolCore", "LMDB", "NATS", "NATSTestSupport",
                "ReplicationHelper", "TestSupport",
            ]),
        // The child process of the replication tests: a primary that commits and publishes, or a replica that applies.
        .executableTarget(
            name: "ReplicationHelper", dependencies: ["KVStoreReplication", "KVStore", "NATS"],
            path: "Tests/ReplicationHelper"),
        // The kit's parser, help layout and errors, on commands declared in the tests.
        .testTarget(name: "CommandLineKitTests", dependencies: ["CommandLineKit"]),
        // The models of the multi-process tests, shared by the tests and the child processes they start.
        .target(name: "SharingModels", dependencies: ["KVStore"], path: "Tests/SharingModels"),
        // The child process of the multi-process tests: opens a store, writes, migrates or streams as told.
        .executableTarget(
            name: "SharingHelper", dependencies: ["KVStore", "SharingModels"], path: "Tests/SharingHelper"),
        // KVStoreInspection gives the model-based tests the integrity check, run in-process; the helper executable is
        // a dependency so that it is built for the multi-process tests that start it.
        .testTarget(
            name: "KVStoreTests",
            dependencies: ["KVStore", "KVStoreInspection", "SharingModels", "SharingHelper", "TestSupport"]),
        .testTarget(name: "KVStoreInspectionTests", dependencies: ["KVStoreInspection", "KVStore", "LMDB"]),
        // The helpers as a program's tests use them, failing ones included (`withKnownIssue`); TestSupport checks
        // that the documentation shows the examples they run.
        .testTarget(name: "KVStoreTestingTests", dependencies: ["KVStoreTesting", "KVStore", "TestSupport"]),
        // Depends on the executables so that they are built for the smoke and help tests that run them; the
        // replicate-* tests start nats-server processes through NATSTestSupport.
        .testTarget(
            name: "KVToolTests",
            dependencies: [
                "KVToolCore", "KVStoreInspection", "KVStore", "LMDB", "CommandLineKit", "TestSupport", "kvtool",
                "crashtest", "kvbench", "NATSTestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
