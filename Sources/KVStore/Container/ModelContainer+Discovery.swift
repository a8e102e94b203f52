extension ModelContainer {
    /// `types` and every model type their relationships reach, directly or through others, each once: the given
    /// types first, in their order, then the discovered ones in the order they were found. A container opened for
    /// `Project.self` holds the `Task` its relationships name too, as SwiftData's does.
    static func withRelatedTypes(_ types: [any StoredModel.Type]) -> [any StoredModel.Type] {
        var found: [any StoredModel.Type] = []
        var seen = Set<ObjectIdentifier>()
        var next = 0
        func add(_ type: any StoredModel.Type) {
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

extension StoredModel {
    /// The model types the relationships of the entity name.
    static var relationshipTargets: [any StoredModel.Type] {
        entity.relationships.map(\.target)
    }
}
