import KVStoreInspection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private copy of standard input, which an import reads twice (once to check it, once to write it) and standard
/// input cannot be: created new (mode 0600) in the scratch directory, removed when the import ends.
final class SpoolFile {
    /// The file's path.
    let path: String
    /// A buffered sink over the file, whose failures name it.
    let sink: FileDescriptorSink
    private let descriptor: Int32

    /// Creates the file in `directory`.
    ///
    /// - Throws: ``ToolError`` when it cannot be created.
    init(in directory: String) throws(ToolError) {
        var template = Array((directory + "/kvtool-input-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkstemp($0) } ?? -1
        }
        guard descriptor >= 0 else {
            throw ToolError(
                "Cannot create a copy of standard input in '\(directory)': "
                    + "\(SystemError.describe(errno, writing: directory)); give another with --scratch-directory")
        }
        self.descriptor = descriptor
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        sink = FileDescriptorSink(
            descriptor: descriptor, name: "a copy of standard input at '\(path)'", aftermath: "nothing was imported")
    }

    /// Writes out what is buffered.
    ///
    /// - Throws: ``OutputFailure`` when a write failed (a full disk).
    func finish() throws {
        sink.flush()
        if let failure = sink.failure { throw failure }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }
}
