#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The C library's `open`, `read` and `close`, for the types whose own methods of those names (`Environment.open`,
// `DataFile.open`) hide them: the calls name the C library's module, which differs between Glibc, Musl and Darwin.

/// `open(2)` without a mode: the file must exist.
func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    #if canImport(Glibc)
        unsafe Glibc.open(path, flags)
    #elseif canImport(Musl)
        unsafe Musl.open(path, flags)
    #elseif canImport(Darwin)
        unsafe Darwin.open(path, flags)
    #endif
}

/// `read(2)` into `count` bytes at `buffer`, which must be writable.
@unsafe
func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        unsafe Glibc.read(descriptor, buffer, count)
    #elseif canImport(Musl)
        unsafe Musl.read(descriptor, buffer, count)
    #elseif canImport(Darwin)
        unsafe Darwin.read(descriptor, buffer, count)
    #endif
}

/// `close(2)`.
@discardableResult
func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(descriptor)
    #elseif canImport(Musl)
        Musl.close(descriptor)
    #elseif canImport(Darwin)
        Darwin.close(descriptor)
    #endif
}
