import Foundation

extension ModelContainer {
    /// Runs `body` in a read transaction, from async code. Reads run in parallel, on the calling task.
    ///
    /// - Parameter body: The reads to do; it runs synchronously inside the transaction.
    /// - Returns: What `body` returns.
    /// - Throws: What the synchronous `read(_:)` throws.
    public func read<R: Sendable>(_ body: @Sendable (borrowing ModelTransaction) throws -> R) async throws -> R {
        try performRead(body)
    }

    /// Runs `body` in a write transaction, from async code.
    ///
    /// Writes run one at a time on the container's serial writer queue, off the cooperative thread pool, so a writer
    /// waiting for LMDB's write lock never holds up other tasks.
    ///
    /// - Parameter body: The reads and writes to do; it runs synchronously inside the transaction.
    /// - Returns: What `body` returns.
    /// - Throws: What the synchronous `write(_:)` throws.
    @discardableResult
    public func write<R: Sendable>(
        _ body: @escaping @Sendable (borrowing ModelTransaction) throws -> R
    ) async throws
        -> R
    {
        try await withCheckedThrowingContinuation { continuation in
            writerQueue.async {
                continuation.resume(with: Result { try self.performWrite(body) })
            }
        }
    }
}
