#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Users by ID, named for messages about who owns a store.
package enum User {
    /// The login name of `uid`, or `nil` when the user database has none.
    package static func name(of uid: uid_t) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        // getpwuid_r, not getpwuid, whose static result another thread may overwrite; the entry's strings live in
        // the buffer, so they are read while it is borrowed.
        return buffer.withUnsafeMutableBufferPointer { storage in
            guard let base = storage.baseAddress, getpwuid_r(uid, &entry, base, storage.count, &found) == 0,
                found != nil, let name = entry.pw_name
            else { return nil }
            return String(cString: name)
        }
    }

    /// `nobody (uid 65534)`, or `uid 1234` for an ID without a name.
    package static func describe(_ uid: uid_t) -> String {
        name(of: uid).map { "\($0) (uid \(uid))" } ?? "uid \(uid)"
    }
}
