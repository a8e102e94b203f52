import Foundation

/// CPU time and resident memory of this process, from `getrusage` and `/proc`.
enum ResourceUsage {
    /// The user and system CPU time the process has used so far, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000
    }

    /// Resets the kernel's record of the process's peak resident set size to the current size.
    ///
    /// Writing "5" to `/proc/self/clear_refs` does it (Linux 4.0 and later); `getrusage`'s `ru_maxrss` cannot be
    /// reset, which is why the scale scenario runs each point in a fresh process instead.
    ///
    /// - Returns: Whether the reset worked.
    @discardableResult
    static func resetPeakRSS() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// The peak resident set size since the process started or since the last ``resetPeakRSS()``, in bytes.
    ///
    /// It is `VmHWM` from `/proc/self/status`, or `ru_maxrss` when that file cannot be read.
    static func peakRSSBytes() -> Int {
        if let bytes = statusBytes("VmHWM:") { return bytes }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1_024
    }

    /// The resident anonymous memory of the process (its heap and stacks, without mapped files), in bytes: `RssAnon`
    /// from `/proc/self/status`, or 0 when that file cannot be read.
    ///
    /// LMDB's pages of the store are a mapped file, so they count in the resident set size (``peakRSSBytes()``) as
    /// they are read or written but not here: this is the memory the process itself allocated.
    static func anonymousRSSBytes() -> Int {
        statusBytes("RssAnon:") ?? 0
    }

    /// A size in kB from a line of `/proc/self/status`, in bytes.
    private static func statusBytes(_ prefix: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(prefix) {
            if let kilobytes = Int(String(line.filter(\.isNumber))) { return kilobytes * 1_024 }
        }
        return nil
    }
}
