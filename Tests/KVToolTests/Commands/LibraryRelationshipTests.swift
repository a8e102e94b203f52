import Foundation
import KVStore
import Testing

/// A team whose members are derived from `Member.teamID`; deleting a team leaves its members' references.
struct Team: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String

    static let entity = Entity<Team>(relationships: [
        .toMany("members", of: Member.self, inverse: \.teamID, deleteRule: .noAction)
    ])
}

/// A member of a team, with a to-one relationship that declares no inverse.
struct Member: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    var teamID: UUID?

    static let entity = Entity<Member>(relationships: [.toOne("team", \.teamID, to: Team.self)])
}

/// Relationships declared through the library's API read back from the catalog alone.
@Suite struct LibraryRelationshipTests {
    @Test func followsAndChecksRelationshipsTheLibraryWrote() throws {
        let store = TemporaryStore()
        let team = Team(id: fixedID(1, entity: 7), name: "Engines")
        let members = [
            Member(id: fixedID(1, entity: 8), name: "Ada", teamID: team.id),
            Member(id: fixedID(2, entity: 8), name: "Charles", teamID: team.id),
        ]
        let container = try ModelContainer(
            for: Team.self, Member.self, configuration: ModelConfiguration(path: store.path))
        let context = ModelContext(container)
        context.insert(team)
        for member in members { context.insert(member) }
        try context.save()
        try container.close()

        let schema = kvtool("schema", store.path).output
        #expect(schema.contains("    members  to-many Member, derived, delete rule noAction\n"))
        let followed = kvtool("get", store.path, "Team", team.id.uuidString, "--follow", "members")
        #expect(followed.status == 0)
        #expect(followed.output.split(separator: "\n").filter { $0.contains("\"name\"") }.count == 3)
        #expect(
            kvtool("get", store.path, "Member", members[1].id.uuidString, "--follow", "team").output.contains("Engines")
        )
        #expect(kvtool("check", store.path).status == 0)

        let reopened = try ModelContainer(
            for: Team.self, Member.self, configuration: ModelConfiguration(path: store.path))
        let deleting = ModelContext(reopened)
        deleting.delete(Team.self, id: team.id)
        try deleting.save()
        try reopened.close()
        let check = kvtool("check", store.path)
        #expect(check.status == 0)
        #expect(
            check.output.hasPrefix(
                "warning: Member \(members[0].id): team (field teamID) references Team \(team.id), which does not exist "
                    + "(Team.members has the delete rule noAction)\n"))
        #expect(
            check.output.hasSuffix(
                "0 errors, 2 warnings: 2 entities, 2 records, 4 index entries, 2 references checked.\n"))
    }
}
