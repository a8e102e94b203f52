// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "KVStore",
    products: [
        .library(name: "KVStore", targets: ["KVStore"]),
        .library(name: "LMDB", targets: ["LMDB"]),
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
        // The benchmark harness. It imports CLMDB directly: its baselines are the raw LMDB C API.
        .executableTarget(name: "kvbench", dependencies: ["CLMDB", "LMDB", "KVStore"], path: "Benchmarks/kvbench"),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
        .testTarget(name: "KVStoreTests", dependencies: ["KVStore"]),
    ],
    swiftLanguageModes: [.v6]
)
