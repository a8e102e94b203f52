import Foundation
import TestSupport

/// The LD_PRELOAD shim of `Tests/Fixtures/faultshim`, which makes writes or syncs of a store's data file fail with
/// ENOSPC or EIO once a child process arms it.
///
/// A test makes a ``Workspace`` (a directory with the compiled shim and a store), fills the store, then runs an exit
/// test whose body calls ``child(_:_:)``: the child re-executes itself with the shim preloaded, arms it, writes, and
/// exits with a status that says what it saw. Exit-test bodies cannot capture the workspace's path, so the child
/// derives it from its parent's process ID and the test's name.
enum FaultShim {
    /// Which calls fail, as `faultshim.c` numbers them.
    enum Calls: Int32 {
        case writes = 1
        case syncs = 2
    }

    /// The status a child exits with when the fault surfaced as expected.
    static let expected: Int32 = 0

    /// The path of the C source.
    static let source = packageRoot(of: #filePath).appendingPathComponent("Tests/Fixtures/faultshim/faultshim.c").path

    /// The C compiler, if the machine has one.
    static let compiler = ["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// The directory of a fault test, for the test process `parent`.
    static func directory(_ name: String, parent: pid_t) -> String {
        URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath().path
            + "/kvstore-faults-\(parent)-\(name)"
    }

    /// A fault test's directory, holding the compiled shim and the store (at ``store``); removed at the end.
    struct Workspace: ~Copyable {
        /// The directory.
        let path: String
        /// The store's directory inside it.
        var store: String { path + "/store" }

        /// Creates the directory and compiles the shim into it.
        init(_ name: String) throws {
            path = FaultShim.directory(name, parent: getpid())
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path + "/store", withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: FaultShim.compiler ?? "/usr/bin/cc")
            process.arguments = ["-shared", "-fPIC", "-o", path + "/faultshim.so", FaultShim.source, "-ldl"]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: FaultShim.source])
            }
        }

        deinit {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// In an exit test's child: loads the shim (re-executing the process with it preloaded the first time), runs
    /// `body` with the store's path and a function that arms the shim, and exits with the status `body` returns.
    ///
    /// `arm(after, errno, calls)` lets `after` more matching calls on `data.mdb` succeed, then fails every one with
    /// `errno`; `body` then calls `disarm()`, which returns how many calls failed.
    static func child(
        _ name: String,
        _ body: (_ store: String, _ arm: (Int, Int32, Calls) -> Void, _ disarm: () -> Int) -> Int32
    ) -> Never {
        let directory = directory(name, parent: getppid())
        guard let armSymbol = dlsym(nil, "faultshim_arm"), let disarmSymbol = dlsym(nil, "faultshim_disarm") else {
            guard getenv("KVSTORE_FAULTSHIM_LOADED") == nil else { exit(90) }
            // The environment the process started with: the testing library removes the variables that told this
            // process which exit test to run, and the process started again must see them too.
            let initial = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/self/environ"))) ?? Data()
            var environment = initial.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            environment.removeAll { $0.hasPrefix("LD_PRELOAD=") }
            environment += ["LD_PRELOAD=" + directory + "/faultshim.so", "KVSTORE_FAULTSHIM_LOADED=1"]
            var pointers = environment.map { strdup($0) } + [nil]
            execve("/proc/self/exe", CommandLine.unsafeArgv, &pointers)
            exit(91)
        }
        typealias Arm = @convention(c) (Int, Int32, Int32, UnsafePointer<CChar>) -> Void
        typealias Disarm = @convention(c) () -> Int
        let arm = unsafeBitCast(armSymbol, to: Arm.self)
        let disarm = unsafeBitCast(disarmSymbol, to: Disarm.self)
        exit(
            body(
                directory + "/store", { after, error, calls in arm(after, error, calls.rawValue, "/data.mdb") },
                { disarm() }))
    }
}
