#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What kind of file a path names, from `lstat`, in words for messages: kvtool says what it found.
package enum FileKind: Equatable {
    case regular, directory, symbolicLink, fifo, characterDevice, blockDevice, socket, unknown

    /// The kind of a file with these `st_mode` bits.
    package init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFIFO: self = .fifo
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFSOCK: self = .socket
        default: self = .unknown
        }
    }

    /// The kind with its article, as a message writes it: `a FIFO (named pipe)`.
    package var description: String {
        switch self {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .symbolicLink: "a symbolic link"
        case .fifo: "a FIFO (named pipe)"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .socket: "a socket"
        case .unknown: "a file of an unknown kind"
        }
    }

    /// The status of `path` itself, not following a symbolic link, or the `errno` of the failure.
    package static func status(of path: String) -> Result<stat, SystemCallFailure> {
        var status = stat()
        guard lstat(path, &status) == 0 else { return .failure(SystemCallFailure(code: errno)) }
        return .success(status)
    }

    /// The kind of `path` with its article, and for a symbolic link where it points: `a symbolic link (to 'x')`.
    package static func describe(_ path: String, status: stat) -> String {
        let kind = FileKind(mode: status.st_mode)
        guard kind == .symbolicLink, let target = linkTarget(path) else { return kind.description }
        return "\(kind.description) (to '\(target)')"
    }

    /// Where the symbolic link at `path` points, as written in the link.
    package static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A system call that failed, with its `errno`.
package struct SystemCallFailure: Error, Equatable {
    /// The `errno` value.
    package let code: Int32
}
