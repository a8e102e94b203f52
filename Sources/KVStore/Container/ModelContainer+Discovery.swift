extension ModelContainer {
    /// `types` and every model type their relationships reach, directly or through others, each once: the given
    /// types first, in their order, then the discovered ones in the order they were found. A container opened for
    /// `Project.self` holds the `Task` its relationships name too, as SwiftData's does.
    static func withRelatedTypes(_ types: [any Model.Type]) -> [any Model.Type] {
        var found: [any Model.Type] = []
        var seen = Set<ObjectIdentifier>()
        var next = 0
        func add(_ type: any Model.Type) {
            if seen.insert(ObjectIdentifier(type)).inserted { found.append(type) }
        }
        types.forEach(add)
        while next < found.count {
            found[next].relationshipTargets.forEach(add)
            next += 1
        }
        return found
    }

}

extension Model {
    /// The model types the relationships of the entity name.
    static var relationshipTargets: [any Model.Type] {
        entity.relationships.map(\.target)
    }
}
