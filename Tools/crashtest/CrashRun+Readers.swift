import Foundation
import KVStore
import KVToolCore
import LMDB

extension CrashRun {
    /// Kills a process inside a read transaction while another process keeps the store open, and checks that the
    /// reader slot it leaves is stale until the store is reopened, and gone after.
    ///
    /// The holder matters: when the last process of a store ends, the next one to open it resets LMDB's reader
    /// table, and a stale slot would vanish whether or not anything clears it.
    func killReader(_ context: String) throws {
        let holder = try Child(["hold", "--store", storePath])
        defer { holder.kill() }
        guard holder.waitUntilReady() else {
            problems.append("\(context): the holder ended before it was ready, \(holder.ending)")
            return
        }
        let reader = try Child(["read", "--store", storePath])
        guard reader.waitUntilReady() else {
            reader.kill()
            problems.append("\(context): the reader ended before it was ready, \(reader.ending)")
            return
        }
        let pid = reader.processID
        reader.kill()
        readerKills += 1

        // kvtool opens the store read-only and clears nothing: the dead reader's slot shows.
        let output = StringSink()
        let status = KVTool.run(
            arguments: ["readers", storePath, "--json"], console: Console(output: output, errors: StringSink()))
        guard status == 0 else {
            problems.append("\(context): kvtool readers failed with status \(status)")
            return
        }
        if readerIDs(inJSON: output.text).contains(pid) { staleSlotsSeen += 1 }

        let container = try ModelContainer(
            for: crashModelTypes, configuration: Self.configuration(path: storePath, durability: options.durability))
        defer { try? container.close() }
        // The registry hands out the container's environment.
        let readers = try Environment.open(path: storePath).readers()
        if readers.contains(where: { $0.processID == pid }) {
            problems.append(
                "\(context): the reader slot of killed process \(pid) is still there after the store was reopened "
                    + "(readers: \(readers.map(\.processID)))")
        }
    }

    /// The process IDs of the slots `kvtool readers --json` printed.
    private func readerIDs(inJSON text: String) -> [Int32] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let readers = object["readers"] as? [[String: Any]]
        else { return [] }
        return readers.compactMap { ($0["pid"] as? NSNumber)?.int32Value }
    }
}
