// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "KVStore",
    products: [
        .library(name: "LMDB", targets: ["LMDB"])
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
        .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
    ],
    swiftLanguageModes: [.v6]
)
