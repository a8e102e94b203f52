import Foundation
import LMDB
import Synchronization

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory: ~Copyable {
    let path: String

    init() throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath().path
        var template = Array((base + "/lmdb-tests-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: base])
        }
        path = String(cString: made)
    }

    /// A path inside the directory.
    func appending(_ component: String) -> String {
        path + "/" + component
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Opens an environment in a fresh temporary directory, runs `body`, then closes the environment and removes the
/// directory.
@discardableResult
func withEnvironment<R>(
    _ configuration: Environment.Configuration = Environment.Configuration(mapSize: 1 << 20),
    _ body: (Environment, String) throws -> R
) throws -> R {
    let directory = try TemporaryDirectory()
    let environment = try Environment.open(path: directory.path, configuration: configuration)
    defer { try? environment.close() }
    return try body(environment, directory.path)
}

extension String {
    /// The string's UTF-8 bytes.
    var bytes: [UInt8] { Array(utf8) }
}

extension Array where Element == UInt8 {
    /// The bytes as a UTF-8 string.
    var string: String { String(decoding: self, as: UTF8.self) }
}

/// Runs `body` on `count` threads of its own (not the cooperative pool, which tests must not block), waits for all of
/// them, and rethrows the first error.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let failures = Locked<[any Error]>([])
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            do {
                try body(index)
            } catch {
                failures.withLock { $0.append(error) }
            }
            group.leave()
        }.start()
    }
    group.wait()
    if let error = failures.withLock({ $0.first }) { throw error }
}

/// A flag that one thread raises and others watch.
final class Flag: Sendable {
    private let value = Atomic(false)

    var isSet: Bool { value.load(ordering: .acquiring) }

    func set() { value.store(true, ordering: .releasing) }
}

/// An integer that threads update together.
final class Counter: Sendable {
    let value: Atomic<Int>

    init(_ initial: Int = 0) { value = Atomic(initial) }
}

/// What the map-growth tests' child process does: opens the environment at `path` with a 32 MiB map and writes
/// 10,000 entries of 1,000 bytes into its table "shared", growing the file far past a 64 KiB map that another process
/// still has open. `check` looks at the child's environment first; returns `false`, writing nothing, when it fails.
func fillSharedTableGrowingTheMap(
    at path: String, check: (Environment) throws -> Bool = { _ in true }
) throws -> Bool {
    let child = try Environment.open(path: path, configuration: .init(mapSize: 32 << 20))
    guard try check(child) else { return false }
    let table = try child.openTable(named: "shared")
    try child.write { txn throws in
        for index in 0..<10_000 {
            try txn.put([UInt8](repeating: 7, count: 1000), forKey: "\(index)".bytes, in: table)
        }
    }
    return true
}
