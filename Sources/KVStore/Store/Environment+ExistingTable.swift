import LMDB

extension Environment {
    /// Opens the table `name` when the file has it, or returns `nil` when it has none.
    ///
    /// LMDB's answer for a missing table (``LMDBError/notFound``, which `openTable(named:options:create:)` throws
    /// for nothing else) is matched here, so that every other failure (a table of other options, a damaged page, a
    /// closed environment) reaches the caller instead of reading as a missing table.
    ///
    /// - Throws: What `openTable(named:options:create:)` throws, but ``LMDBError/notFound``.
    package func tableIfPresent(named name: String, options: Table.Options = []) throws -> Table? {
        do {
            return try openTable(named: name, options: options)
        } catch LMDBError.notFound {
            return nil
        }
    }
}
