import Foundation
import FuzzSupport
import LMDB

// Writes random bytes to a file and checks it as an LMDB data file, with both scopes. The seeds are real small
// stores that the LMDB binding writes: an empty one, one table, sub-pages and sub-databases of duplicates (LEAF2
// pages), overflow values, named tables and a free list. The check must return a report (or throw for a file it
// cannot read at all), never trap, loop or exhaust memory.

/// Where each input is written: one file per process, rewritten for every input.
let inputPath = NSTemporaryDirectory() + "/fuzz-page-check-\(getpid()).mdb"

/// Makes a store with `fill` in a temporary directory and returns its data file's bytes.
func storeBytes(_ fill: (Environment) throws -> Void) throws -> [UInt8] {
    let directory = NSTemporaryDirectory() + "/fuzz-page-check-seed-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let environment = try Environment.open(path: directory, configuration: .init(mapSize: 8 << 20))
    try fill(environment)
    try environment.close()
    return Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/data.mdb")))
}

/// A 4-byte big-endian key.
func key(_ number: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt32(number).bigEndian, Array.init)
}

/// A 16-byte value, like the UUIDs of KVStore's indexes.
func value(_ number: Int) -> [UInt8] {
    key(number) + [UInt8](repeating: 0x5A, count: 12)
}

/// The seeds: small stores of each shape, each a few pages long so that inputs stay small.
func seeds() throws -> [[UInt8]] {
    [
        try storeBytes { _ in },
        try storeBytes { environment in
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn in
                for number in 0..<300 { try txn.put(value(number), forKey: key(number), in: table) }
            }
        },
        try storeBytes { environment in
            let index = try environment.openTable(named: "index", options: [.dupSort, .dupFixed], create: true)
            try environment.write { txn in
                for number in 0..<40 { try txn.put(value(number), forKey: key(number % 8), in: index) }
                for number in 0..<400 { try txn.put(value(number), forKey: key(100), in: index) }
            }
        },
        try storeBytes { environment in
            let dups = try environment.openTable(named: "dups", options: [.dupSort], create: true)
            try environment.write { txn in
                for number in 0..<30 { try txn.put(key(number) + key(number), forKey: key(number % 3), in: dups) }
                for number in 0..<300 { try txn.put(value(number), forKey: key(50), in: dups) }
            }
        },
        try storeBytes { environment in
            let big = try environment.openTable(named: "big", create: true)
            try environment.write { txn in
                for number in 0..<3 { try txn.put([UInt8](repeating: 1, count: 5000), forKey: key(number), in: big) }
            }
        },
        try storeBytes { environment in
            let tables = try (0..<12).map { try environment.openTable(named: "table \($0)", create: true) }
            try environment.write { txn in
                for (number, table) in tables.enumerated() {
                    try txn.put(value(number), forKey: key(number), in: table)
                }
            }
            for round in 0..<4 {
                try environment.write { txn in
                    for table in tables { try txn.put(value(round), forKey: key(round + 100), in: table) }
                    try txn.delete(forKey: key(round), in: tables[round])
                }
            }
        },
    ]
}

/// Writes the seeds when asked to.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: Corpus.Arguments) -> CInt {
    Corpus.writeIfRequested(arguments: Corpus.arguments(argc, argv), seeds: seeds)
    atexit { unlink(inputPath) }
    return 0
}

/// Checks one input as a data file.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // `fatalError` below is deliberate: it is how a target reports a broken property to libFuzzer, which saves the
    // input as a crash to replay. It never runs in the library.
    let bytes = Data(UnsafeRawBufferPointer(start: data, count: size))
    do {
        try bytes.write(to: URL(fileURLWithPath: inputPath))
    } catch {
        fatalError("cannot write the input to \(inputPath): \(error)")
    }
    for scope in [PageCheck.Scope.full, .roots] {
        let report: PageCheck.Report
        do {
            report = try PageCheck.checkFile(path: inputPath, options: .init(scope: scope, maxProblems: 20))
        } catch {
            fatalError("a readable file made the check throw: \(error)")
        }
        guard report.problems.count <= 20, report.fileSize == size else {
            fatalError("the report lists \(report.problems.count) problems of at most 20, or the wrong file size")
        }
    }
    return 0
}
