import Foundation
import LMDB
import Testing

/// `releaseMappedPages()` gives the pages read through the memory map back to the kernel, and reads go on unchanged.
@Suite struct ResidencyTests {
    /// The resident kilobytes of this process's mappings of `file`, from /proc/self/smaps.
    static func residentKilobytes(of file: String) throws -> Int {
        // A /proc file reports no size: read it to its end.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var total = 0
        var isFile = false
        for line in smaps.split(separator: "\n") {
            // A mapping's first line: its address range, then its permissions, offset, device, inode and path.
            if let first = line.first, first.isHexDigit, line.split(separator: " ").count >= 5 {
                isFile = line.hasSuffix(file)
            } else if isFile, line.hasPrefix("Rss:") {
                total += Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
            }
        }
        return total
    }

    @Test func releasedPagesLeaveTheResidentSetAndReadTheSameAfterwards() throws {
        try withEnvironment(Environment.Configuration(mapSize: 64 << 20)) { environment, path throws in
            let table = try environment.openTable(named: "values", create: true)
            let value = [UInt8](repeating: 0xA5, count: 3000)
            try environment.write { txn in
                for number in 0..<4000 { try txn.put(value, forKey: Array("key \(number)".utf8), in: table) }
            }
            func readAll() throws -> Int {
                try environment.read { txn in
                    var matching = 0
                    try txn.scan(table) { _, bytes in
                        if bytes.elementsEqual(value) { matching += 1 }
                        return true
                    }
                    return matching
                }
            }
            #expect(try readAll() == 4000)
            let before = try Self.residentKilobytes(of: path + "/data.mdb")
            #expect(before > 8 << 10, "4,000 values of 3,000 bytes read through the map: \(before) kB")
            try environment.releaseMappedPages()
            let after = try Self.residentKilobytes(of: path + "/data.mdb")
            #expect(after < before / 10, "\(before) kB before, \(after) kB after")
            #expect(try readAll() == 4000)
        }
    }
}
