import Foundation
import LMDB
import Testing

/// Damaged files and files the process may not write: opening fails with a clear error or reads what is intact, and
/// never crashes. Each open runs in a child process, so that a crash fails the test instead of ending the run.
@Suite struct FaultTests {
    /// What a child saw, as its exit status.
    enum Outcome {
        /// Opened, and every record read back.
        static let intact: Int32 = 0
        /// Opened, but the table is gone: the file was taken for a new, empty environment.
        static let empty: Int32 = 20
        /// Opening or reading threw `LMDBError.invalid` (not an LMDB file, or a version mismatch).
        static let invalid: Int32 = 21
        /// Opening or reading threw `LMDBError.corrupted`.
        static let corrupted: Int32 = 22
        /// Opening or reading threw another error.
        static let otherError: Int32 = 23
        /// Opened, but records differ.
        static let wrongData: Int32 = 24
        /// Opening threw `LMDBError.noSuchFile`: there is no environment to read.
        static let noSuchFile: Int32 = 25
        /// Opening threw `LMDBError.accessDenied`.
        static let accessDenied: Int32 = 26
        /// Opening threw `LMDBError.corrupted` for a damaged meta page.
        static let damagedMeta: Int32 = 27
    }

    /// The records every damaged store was made with: enough to fill several pages.
    static let recordCount = 500

    /// Makes a store of ``recordCount`` records in table `t`, closed.
    static func makeStore(at path: String) throws {
        let environment = try Environment.open(path: path, configuration: .init(mapSize: 4 << 20))
        let table = try environment.openTable(named: "t", create: true)
        try environment.write { txn throws in
            for index in 0..<recordCount {
                try txn.put(
                    [UInt8](repeating: UInt8(index % 256), count: 100), forKey: Array("\(index)".utf8), in: table)
            }
        }
        try environment.close()
    }

    /// In a child: opens the store, reads every record and returns the outcome.
    static func open(_ path: String, readOnly: Bool) -> Int32 {
        do {
            let environment = try Environment.open(
                path: path, configuration: .init(mapSize: 4 << 20, options: readOnly ? .readOnly : []))
            let table: Table
            do {
                table = try environment.openTable(named: "t")
            } catch {
                // A catch-all: Swift 6.3.1 can crash compiling a `catch LMDBError.notFound` that lets
                // the other typed errors through (swiftlang/swift#90582).
                guard error == .notFound else { throw error }
                return Outcome.empty
            }
            let entries = try environment.read { txn in try txn.entries(in: table) }
            guard entries.count == recordCount else { return Outcome.wrongData }
            return Outcome.intact
        } catch let error as LMDBError where error == .invalid {
            return Outcome.invalid
        } catch let error as LMDBError where error == .corrupted {
            if error.description.contains("truncated") { return Outcome.corrupted }
            return error.description.contains("damaged") ? Outcome.damagedMeta : Outcome.otherError
        } catch let error as LMDBError where error == .noSuchFile {
            return Outcome.noSuchFile
        } catch let error as LMDBError where error == .accessDenied {
            return Outcome.accessDenied
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return Outcome.otherError
        }
    }

    /// Damages a file of the store.
    enum Damage: String, CaseIterable, Sendable, Codable {
        case dataEmpty, dataHalf, dataMetaGarbage, dataFirstMetaGarbage, lockEmpty, lockGarbage
        /// Both meta pages name a page size of 0, which divided by zero inside `mdb_env_open`.
        case dataPageSizeZero
        /// The second meta page, the newer, names 1 MiB pages (as a file the fuzzer damaged did): LMDB took them,
        /// and reading the second meta page through the map, past the end of the file, raised SIGBUS.
        case dataPageSizeLarge
        /// The second meta page names another page size LMDB writes than the first.
        case dataPageSizesDiffer
        /// Both meta pages name a last page beyond any file.
        case dataLastPageHuge

        /// What opening the store after this damage must give.
        func expected(readOnly: Bool) -> Int32 {
            switch self {
            // LMDB takes an empty data file for a new environment, which a read-only open cannot create.
            case .dataEmpty: readOnly ? Outcome.noSuchFile : Outcome.empty
            case .dataHalf: Outcome.corrupted
            case .dataMetaGarbage, .dataFirstMetaGarbage: Outcome.invalid
            case .dataPageSizeZero, .dataPageSizeLarge, .dataPageSizesDiffer, .dataLastPageHuge: Outcome.damagedMeta
            // The first process to open an environment resets its lock file.
            case .lockEmpty, .lockGarbage: Outcome.intact
            }
        }

        /// Damages the store at `path`.
        func apply(to path: String) throws {
            let file = path + (rawValue.hasPrefix("data") ? "/data.mdb" : "/lock.mdb")
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file))
            defer { try? handle.close() }
            var random = SystemRandomNumberGenerator()
            let garbage = { (count: Int) in Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }) }
            switch self {
            case .dataEmpty, .lockEmpty:
                try handle.truncate(atOffset: 0)
            case .dataHalf:
                try handle.truncate(atOffset: try handle.seekToEnd() / 2)
            case .dataMetaGarbage:
                try handle.write(contentsOf: garbage(8192))
            case .dataFirstMetaGarbage:
                try handle.write(contentsOf: garbage(4096))
            case .lockGarbage:
                try handle.write(contentsOf: garbage(Int(try handle.seekToEnd())))
            case .dataPageSizeZero:
                try Self.write(UInt32(0), atMetaOffset: Self.pageSizeOffset, of: handle, pages: [0, 1])
            case .dataPageSizeLarge:
                try Self.write(UInt32(1 << 20), atMetaOffset: Self.pageSizeOffset, of: handle, pages: [1])
                try Self.write(UInt64(1) << 40, atMetaOffset: Self.transactionOffset, of: handle, pages: [1])
            case .dataPageSizesDiffer:
                try Self.write(UInt32(8192), atMetaOffset: Self.pageSizeOffset, of: handle, pages: [1])
            case .dataLastPageHuge:
                try Self.write(UInt64(1) << 62, atMetaOffset: Self.lastPageOffset, of: handle, pages: [0, 1])
            }
        }

        /// Where a meta page keeps its page size (the free list record's `md_pad`): after the 16-byte page header,
        /// the magic number, the version, the address and the map size.
        static let pageSizeOffset = 16 + 24
        /// Where a meta page keeps its last page number: after both 48-byte table records.
        static let lastPageOffset = 16 + 24 + 96
        /// Where a meta page keeps its transaction ID, after the last page number.
        static let transactionOffset = lastPageOffset + 8

        /// Writes `value`, little-endian, at `offset` of the given 4 KiB meta pages.
        static func write(
            _ value: some FixedWidthInteger, atMetaOffset offset: Int, of handle: FileHandle, pages: [Int]
        ) throws {
            for page in pages {
                try handle.seek(toOffset: UInt64(page * 4096 + offset))
                try handle.write(contentsOf: withUnsafeBytes(of: value.littleEndian) { Data($0) })
            }
        }
    }

    @Test(arguments: Damage.allCases, [false, true])
    func aDamagedStoreFailsClearlyOrReadsWhatIsIntact(damage: Damage, readOnly: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path
        try Self.makeStore(at: path)
        try damage.apply(to: path)
        await #expect(processExitsWith: .exitCode(damage.expected(readOnly: readOnly))) {
            [path = path as String, readOnly = readOnly as Bool] in
            exit(Self.open(path, readOnly: readOnly))
        }
    }
}
