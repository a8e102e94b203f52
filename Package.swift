// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "KVStore",
    products: [
        .library(name: "KVStore", targets: ["KVStore"]),
        .library(name: "LMDB", targets: ["LMDB"]),
        .executable(name: "kvtool", targets: ["kvtool"]),
        // For the fuzz targets of Tools/fuzz, a package of its own that depends on this one; not for applications.
        .library(name: "KVToolCore", targets: ["KVToolCore"]),
    ],
    targets: [
        // Debian's liblmdb-dev, found through pkg-config. `make deps` installs it.
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // The safe binding: the only module that imports CLMDB, and free of Foundation.
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        // The object store users import.
        .target(name: "KVStore", dependencies: ["LMDB"]),
        // The inspector's logic, a library so that its tests run it in-process.
        .target(name: "KVToolCore", dependencies: ["KVStore", "LMDB"], path: "Tools/kvtool/Core"),
        // The inspector's executable: its main only calls KVToolCore.
        .executableTarget(name: "kvtool", dependencies: ["KVToolCore"], path: "Tools/kvtool/Main"),
        // The benchmark harness. It imports CLMDB directly: its baselines are the raw LMDB C API.
        .executableTarget(name: "kvbench", dependencies: ["CLMDB", "LMDB", "KVStore"], path: "Benchmarks/kvbench"),
        // The crash test: kills writer processes at random moments and checks the store (`make crashtest`). It
        // runs kvtool's integrity check in-process.
        .executableTarget(name: "crashtest", dependencies: ["KVStore", "LMDB", "KVToolCore"], path: "Tools/crashtest"),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
        // KVToolCore gives the model-based tests kvtool's integrity check, run in-process.
        .testTarget(name: "KVStoreTests", dependencies: ["KVStore", "KVToolCore"]),
        // Depends on the executables so that they are built for the smoke tests that run them.
        .testTarget(name: "KVToolTests", dependencies: ["KVToolCore", "KVStore", "LMDB", "kvtool", "crashtest"]),
    ],
    swiftLanguageModes: [.v6]
)
