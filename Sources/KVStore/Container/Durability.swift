import LMDB

/// How long a commit waits for the disk, and so what a crash of the machine can take back.
///
/// A crash of the process never loses a commit at any level: a commit hands its pages to the operating system before
/// it returns, and the system writes them out after the process is gone. The levels differ only when the operating
/// system itself stops (a kernel panic, a power cut, a virtual machine killed):
///
/// | Level | A commit waits for | After a process crash | After an OS crash or power loss | SQLite's counterpart |
/// |---|---|---|---|---|
/// | ``full`` | its data, then the metadata that makes it current | nothing committed is lost | nothing committed is lost | WAL, `synchronous=FULL` |
/// | ``normal`` | its data; the metadata goes with the next commit | nothing committed is lost | the last commit may be lost; the store is never damaged | WAL, `synchronous=NORMAL` |
/// | ``off`` | nothing | nothing committed is lost | the last commits may be lost, and the store may be damaged (`kvtool check` says so) | `synchronous=OFF` |
///
/// The promises after an OS crash follow from LMDB's design (lmdb.h on `MDB_NOMETASYNC` and `MDB_NOSYNC`): a commit
/// first writes its new pages, which no reader can see yet, then the metadata page that points readers at them. At
/// ``full`` both are flushed in that order. At ``normal`` the data is flushed and the metadata is written but flushed
/// by the next commit, so an OS crash may leave the previous metadata, which points at a complete older state. At
/// ``off`` nothing is flushed, and the disk may hold the metadata without the pages it points at, unless the file
/// system writes in order. `crashtest` kills writers at every level and checks that nothing committed is lost; an
/// OS crash cannot be tested on a virtual machine.
///
/// ``ModelContainer/sync()`` flushes whatever a weaker level left unflushed, for a program that loads in bulk at
/// ``off`` and then wants the result on disk.
///
/// ```swift
/// let configuration = ModelConfiguration(path: "/var/lib/app/store", durability: .normal)
/// ```
public enum Durability: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Every commit waits until its data and the metadata that makes it current are on disk: nothing committed is
    /// lost, even by a power cut. The default.
    case full
    /// Every commit waits until its data is on disk; the metadata that makes it current is flushed by the next
    /// commit or ``ModelContainer/sync()``. An OS crash or power cut may undo the last commit, and never damages the
    /// store (LMDB's `MDB_NOMETASYNC`; SQLite's WAL with `synchronous=NORMAL`).
    case normal
    /// Commits do not wait for the disk. An OS crash or power cut may undo the last commits and may damage the
    /// store; a crash of the process loses nothing. For bulk loads that can start over, and for tests (LMDB's
    /// `MDB_NOSYNC`; SQLite's `synchronous=OFF`).
    case off

    /// The level's name, as in code: `full`, `normal` or `off`.
    public var description: String {
        switch self {
        case .full: "full"
        case .normal: "normal"
        case .off: "off"
        }
    }

    /// The environment options that make commits wait this much.
    var environmentOptions: Environment.Options {
        switch self {
        case .full: []
        case .normal: .noMetaSync
        case .off: .noSync
        }
    }

    /// The level that commits of an environment with `options` run at.
    init(environmentOptions options: Environment.Options) {
        if options.contains(.noSync) {
            self = .off
        } else if options.contains(.noMetaSync) {
            self = .normal
        } else {
            self = .full
        }
    }
}
