import Foundation
import LMDB
import Testing

@testable import KVStore

/// 1 MiB chunks of a byte that changes from chunk to chunk, `count` of them.
struct LargeSource: AsyncSequence, Sendable {
    typealias Element = Data
    static let chunkSize = 1 << 20
    let count: Int
    /// Called before each chunk is produced, to sample the memory.
    let sample: @Sendable () -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: LargeSource
        var index = 0

        mutating func next() async throws -> Data? {
            source.sample()
            guard index < source.count else { return nil }
            defer { index += 1 }
            return LargeSource.chunk(index)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }

    static func chunk(_ index: Int) -> Data {
        Data(repeating: UInt8(truncatingIfNeeded: index &* 37 &+ 1), count: chunkSize)
    }
}

/// The 1 GB value, streamed in and out with bounded memory. It takes about 10 s in a debug build, but writes 1 GiB
/// to the temporary directory and measures the process's memory, which the address sanitizer inflates, so it runs
/// only with `KVSTORE_LARGE_TESTS=1` (`make test-large`).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["KVSTORE_LARGE_TESTS"] == "1"))
struct ExternalLargeValueTests {
    static let megabytes = 1024

    static func anonymousMemory() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }

    @Test func aGigabyteStreamsInAndOutWithBoundedMemory() async throws {
        let directory = StoreDirectory()
        // In a child process: tests running in parallel in this one would grow its memory too. The child reports
        // what went wrong, and what it measured, on its standard error.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [path = directory.path as String] in
            let report = try await Self.streamAGigabyte(path: path)
            FileHandle.standardError.write(Data(report.utf8))
        }
        let report = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!report.contains("FAILED"), Comment(rawValue: report))
        print(report)
    }

    static func streamAGigabyte(path: String) async throws -> String {
        let container = try ModelContainer(
            for: externalModelTypes, configuration: ModelConfiguration(path: path, durability: .off))
        let photo = PhotoE(title: "A gigabyte")
        try await container.write { txn in try txn.insert(photo) }
        let baseline = anonymousMemory()
        let peak = Locked(baseline)
        let sample: @Sendable () -> Void = { peak.withLock { $0 = max($0, anonymousMemory()) } }

        let writeStart = ContinuousClock.now
        let saved = try await container.setData(
            for: \.image, of: photo, from: LargeSource(count: megabytes, sample: sample))
        let writeTime = ContinuousClock.now - writeStart
        let writePeak = peak.withLock { $0 } - baseline

        var failures: [String] = []
        let total = megabytes * LargeSource.chunkSize
        if saved.image.byteCount != total { failures.append("stored \(saved.image.byteCount) bytes") }

        // Read back chunk by chunk, comparing with the source as it was produced.
        let readStart = ContinuousClock.now
        var offset = 0
        var expected = Data()
        var expectedIndex = 0
        for try await chunk in container.chunks(for: \.image, of: saved) {
            sample()
            while expected.count < chunk.count {
                expected.append(LargeSource.chunk(expectedIndex))
                expectedIndex += 1
            }
            if expected.prefix(chunk.count) != chunk {
                failures.append("the chunk at \(offset) differs")
                break
            }
            expected = Data(expected.dropFirst(chunk.count))
            offset += chunk.count
        }
        let readTime = ContinuousClock.now - readStart
        if offset != total { failures.append("read \(offset) bytes") }
        let growth = peak.withLock { $0 } - baseline
        // Generous: a write batch is 16 MiB, and the value is 1 GiB.
        if growth > 256 << 20 { failures.append("memory grew by \(growth >> 20) MiB") }
        let attributes = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
        let fileSize = (attributes[.size] as? Int) ?? 0
        try container.close()
        var report = failures.isEmpty ? "" : "FAILED: " + failures.joined(separator: "; ") + "\n"
        report += "1 GiB streamed in: \(writeTime), peak anonymous memory growth \(writePeak >> 20) MiB; "
        report += "streamed out: \(readTime); peak growth overall \(growth >> 20) MiB; "
        report += "data.mdb \(fileSize >> 20) MiB\n"
        return report
    }
}
