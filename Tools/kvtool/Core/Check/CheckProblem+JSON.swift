import KVStoreInspection

extension CheckProblem {
    /// The problem as `kvtool check --json` prints it: `severity`, `entity`, `id`, `part` and `message`, `null` for
    /// what does not apply.
    var json: JSONValue {
        .object([
            JSONMember("severity", .string(severity.rawValue)),
            JSONMember("entity", entity.map(JSONValue.string) ?? .null),
            JSONMember("id", id.map { .string($0.uuidString) } ?? .null),
            JSONMember("part", part.map(JSONValue.string) ?? .null), JSONMember("message", .string(message)),
        ])
    }
}
