// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for KVStore's decoders, the LMDB binding's page check and `kvtool check`, in a package of their
// own so that fuzzing never reaches the library's users. No setting here is unusual: `make fuzz` builds with
// `--sanitize fuzzer --sanitize address`, which instruments this package and the KVStore package it depends on, and
// links libFuzzer, whose `main` runs each target.
let package = Package(
    name: "KVStoreFuzz",
    dependencies: [
        // The KVStore package itself, two directories up.
        .package(name: "KVStore", path: "../..")
    ],
    targets: [
        // The model with many field shapes, the corpus writer and the store the import target reads its catalog from.
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "KVStore", package: "KVStore"),
                .product(name: "KVToolCore", package: "KVStore"),
            ]),
        // Random bytes decoded as a record of the many-shaped model, and as a schema-free tree.
        .executableTarget(
            name: "FuzzRecordDecoder",
            dependencies: ["FuzzSupport", .product(name: "KVStore", package: "KVStore")]),
        // Random bytes decoded as an index key of one to three components of any indexable kind.
        .executableTarget(
            name: "FuzzIndexKey",
            dependencies: ["FuzzSupport", .product(name: "KVStore", package: "KVStore")]),
        // Random bytes checked as an LMDB data file by the page check, from seeds that are real small stores.
        .executableTarget(
            name: "FuzzPageCheck",
            dependencies: ["FuzzSupport", .product(name: "LMDB", package: "KVStore")]),
        // Random bytes parsed as one line of `kvtool import`, against the catalog of a store of the model.
        .executableTarget(
            name: "FuzzImportLine",
            dependencies: ["FuzzSupport", .product(name: "KVToolCore", package: "KVStore")]),
        // Random byte damage to real stores, checked by `kvtool check` as a whole.
        .executableTarget(
            name: "FuzzStoreCheck",
            dependencies: [
                "FuzzSupport", .product(name: "KVStore", package: "KVStore"),
                .product(name: "KVToolCore", package: "KVStore"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
