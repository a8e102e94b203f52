extension ModelContainer {
    /// The context of the main actor: SwiftData's `mainContext`, for programs that run the main actor, such as one
    /// with an async `main`.
    ///
    /// Every use on the main actor returns the same context, so changes made through it in one place are pending in
    /// every other until its ``ModelContext/save()``. Background work takes a ``ModelContext`` of its own, or a
    /// ``ModelActor``; the compiler keeps the main context on the main actor.
    ///
    /// ```swift
    /// @MainActor func addProject(to container: ModelContainer) throws {
    ///     container.mainContext.insert(Project(name: "Launch"))
    ///     try container.mainContext.save()
    /// }
    /// ```
    ///
    /// The container holds its main context and the context its container, until ``close()`` lets the context go
    /// with whatever it has not saved.
    @MainActor
    public var mainContext: ModelContext {
        mainContextSlot.withLock { slot in
            if let context = slot as? ModelContext { return context }
            let context = ModelContext(self)
            slot = context
            return context
        }
    }
}
