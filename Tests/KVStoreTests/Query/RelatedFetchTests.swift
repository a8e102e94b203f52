import Foundation
import TestSupport
import Testing

@testable import KVStore

/// A team, the parent of a cross-relationship fetch.
struct Squad: Model, Equatable {
    var id = UUID()
    var name: String
    var isActive: Bool
    var rank: Int

    static let entity = Entity<Squad>(indexes: [.index(\.isActive), .unique(\.name)])
}

/// A member of a team, the child, counting its decodes for the task that set ``decodes``.
struct SquadMember: Model, Equatable {
    var id = UUID()
    var teamID: UUID?
    var formerTeamID: UUID?
    var joinedAt: Int
    var isAdmin: Bool

    static let entity = Entity<SquadMember>(indexes: [.index(\.teamID)])

    @TaskLocal static var decodes: DecodeCounter?

    init(teamID: UUID?, joinedAt: Int, isAdmin: Bool) {
        (self.teamID, self.joinedAt, self.isAdmin) = (teamID, joinedAt, isAdmin)
    }

    enum CodingKeys: String, CodingKey { case id, teamID, formerTeamID, joinedAt, isAdmin }

    init(from decoder: any Decoder) throws {
        Self.decodes?.count.add(1, ordering: .relaxed)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        teamID = try container.decodeIfPresent(UUID.self, forKey: .teamID)
        formerTeamID = try container.decodeIfPresent(UUID.self, forKey: .formerTeamID)
        joinedAt = try container.decode(Int.self, forKey: .joinedAt)
        isAdmin = try container.decode(Bool.self, forKey: .isAdmin)
    }
}

/// Fetches filtered and ordered by a to-one relationship's target agree with filtering everything in memory, read
/// only the children of the parents that match, and see a context's pending changes.
@Suite struct RelatedFetchTests {
    static func data(seed: UInt64) -> (teams: [Squad], members: [SquadMember]) {
        var random = SplitMix64(seed: seed)
        let teams = (0..<30).map { number in
            Squad(
                name: "team \(number)", isActive: Int.random(in: 0..<3, using: &random) > 0,
                rank: Int.random(in: 0..<10, using: &random))
        }
        let members = (0..<300).map { _ in
            SquadMember(
                teamID: Int.random(in: 0..<20, using: &random) == 0
                    ? nil : teams[Int.random(in: 0..<teams.count, using: &random)].id,
                joinedAt: Int.random(in: 0..<50, using: &random), isAdmin: Int.random(in: 0..<4, using: &random) == 0)
        }
        return (teams, members)
    }

    /// What a related fetch gives, computed over every model in memory.
    static func reference(
        _ descriptor: RelatedFetchDescriptor<SquadMember, Squad>, teams: [Squad], members: [SquadMember]
    ) throws -> [UUID] {
        var parents = try teams.filter { try descriptor.parent.predicate?.evaluate($0) ?? true }
        parents.sort { $0.id.isOrdered(before: $1.id) }
        if !descriptor.parent.sortBy.isEmpty { parents.sort(using: descriptor.parent.sortBy) }
        parents = descriptor.parent.page(of: parents)
        let children = try members.filter { try descriptor.descriptor.predicate?.evaluate($0) ?? true }
        var result: [SquadMember] = []
        if descriptor.parent.sortBy.isEmpty {
            let ids = Set(parents.map(\.id))
            result = children.filter { $0.teamID.map(ids.contains) ?? false }.sorted { $0.id.isOrdered(before: $1.id) }
            if !descriptor.descriptor.sortBy.isEmpty { result.sort(using: descriptor.descriptor.sortBy) }
            return descriptor.descriptor.page(of: result).map(\.id)
        }
        for parent in parents {
            var own = children.filter { $0.teamID == parent.id }.sorted { $0.id.isOrdered(before: $1.id) }
            if !descriptor.descriptor.sortBy.isEmpty { own.sort(using: descriptor.descriptor.sortBy) }
            result += own
        }
        return descriptor.descriptor.page(of: result).map(\.id)
    }

    static func descriptors() -> [RelatedFetchDescriptor<SquadMember, Squad>] {
        let parents: [FetchDescriptor<Squad>] = {
            var topThree = FetchDescriptor<Squad>(sortBy: [SortDescriptor(\.rank, order: .reverse)])
            topThree.fetchLimit = 3
            return [
                FetchDescriptor(),
                FetchDescriptor(predicate: #Predicate { $0.isActive }),
                FetchDescriptor(predicate: #Predicate { $0.rank > 6 }),
                FetchDescriptor(predicate: #Predicate { $0.isActive }, sortBy: [SortDescriptor(\.name)]),
                topThree,
            ]
        }()
        let children: [FetchDescriptor<SquadMember>] = {
            var firstTen = FetchDescriptor<SquadMember>(sortBy: [SortDescriptor(\.joinedAt)])
            firstTen.fetchLimit = 10
            firstTen.fetchOffset = 2
            return [
                FetchDescriptor(),
                FetchDescriptor(predicate: #Predicate { $0.isAdmin }),
                FetchDescriptor(sortBy: [SortDescriptor(\.joinedAt, order: .reverse)]),
                firstTen,
            ]
        }()
        return parents.flatMap { parent in
            children.map { RelatedFetchDescriptor($0, through: \.teamID, parent: parent) }
        }
    }

    @Test(arguments: [1 as UInt64, 2])
    func relatedFetchesAgreeWithTheModelsInMemory(seed: UInt64) throws {
        try withContainer(Squad.self, SquadMember.self) { container throws in
            let (teams, members) = Self.data(seed: seed)
            let context = ModelContext(container)
            try context.insert(contentsOf: teams)
            try context.insert(contentsOf: members)
            try context.save()
            for (number, descriptor) in Self.descriptors().enumerated() {
                let expected = try Self.reference(descriptor, teams: teams, members: members)
                #expect(try context.fetch(descriptor).map(\.id) == expected, "descriptor \(number)")
                #expect(
                    try container.read { txn in try txn.fetch(descriptor).map(\.id) } == expected,
                    "transaction, descriptor \(number)")
            }
        }
    }

    @Test func onlyTheChildrenOfMatchingParentsAreRead() throws {
        try withContainer(Squad.self, SquadMember.self) { container throws in
            let (teams, members) = Self.data(seed: 3)
            let context = ModelContext(container)
            try context.insert(contentsOf: teams)
            try context.insert(contentsOf: members)
            try context.save()
            let chosen = teams[7].name
            let descriptor = RelatedFetchDescriptor(
                FetchDescriptor<SquadMember>(), through: \.teamID,
                parent: FetchDescriptor<Squad>(predicate: #Predicate { $0.name == chosen }))
            let counter = DecodeCounter()
            let found = try SquadMember.$decodes.withValue(counter) { try context.fetch(descriptor) }
            let expected = members.filter { $0.teamID == teams[7].id }
            #expect(Set(found.map(\.id)) == Set(expected.map(\.id)))
            #expect(counter.count.load(ordering: .relaxed) == expected.count)
            #expect(
                try context.explain(descriptor)
                    == "parents: unique index name: 1 key; then children: index teamID, 1 key per parent")
        }
    }

    @Test func aContextsPendingChangesTakePart() throws {
        try withContainer(Squad.self, SquadMember.self) { container throws in
            let context = ModelContext(container)
            let active = Squad(name: "active", isActive: true, rank: 1)
            let idle = Squad(name: "idle", isActive: false, rank: 2)
            var members = (0..<6).map {
                SquadMember(teamID: $0 < 3 ? active.id : idle.id, joinedAt: $0, isAdmin: false)
            }
            try context.insert(contentsOf: [active, idle])
            try context.insert(contentsOf: members)
            try context.save()
            // Unsaved: one moved to the active team, one deleted, one inserted, and the idle team activated.
            members[4].teamID = active.id
            context.insert(members[4])
            context.delete(members[0])
            let newcomer = SquadMember(teamID: idle.id, joinedAt: 9, isAdmin: true)
            context.insert(newcomer)
            let descriptor = RelatedFetchDescriptor(
                FetchDescriptor<SquadMember>(sortBy: [SortDescriptor(\.joinedAt)]), through: \.teamID,
                parent: FetchDescriptor<Squad>(predicate: #Predicate { $0.isActive }))
            #expect(try context.fetch(descriptor).map(\.joinedAt) == [1, 2, 4])
            var activated = idle
            activated.isActive = true
            context.insert(activated)
            #expect(try context.fetch(descriptor).map(\.joinedAt) == [1, 2, 3, 4, 5, 9])
        }
    }

    @Test func aReferenceWithoutAnIndexIsRefused() throws {
        try withContainer(Squad.self, SquadMember.self) { container throws in
            let context = ModelContext(container)
            let descriptor = RelatedFetchDescriptor(
                FetchDescriptor<SquadMember>(), through: \.formerTeamID, parent: FetchDescriptor<Squad>())
            let error = #expect(throws: KVStoreError.invalidRelationship) { try context.fetch(descriptor) }
            #expect(error?.message == "SquadMember has no index on formerTeamID, which a relationship needs")
            #expect(throws: KVStoreError.invalidRelationship) { try context.explain(descriptor) }
        }
    }
}

/// Fetches across a to-one relationship property of reference models: the context's objects, with its unsaved
/// changes, read through the relationship's index.
@Suite struct ReferenceModelRelatedFetchTests {
    @Test func theChildrenOfTheMatchingParentsAreTheContextsObjects() throws {
        try withContainer(RefProject.self) { container throws in
            let context = ModelContext(container)
            let projects = (0..<4).map { RefProject(name: "project \($0)") }
            var tasks: [RefTask] = []
            for (number, project) in projects.enumerated() {
                for index in 0..<5 {
                    let task = RefTask(
                        title: "p\(number)-t\(index)", project: project, priority: (number * 7 + index) % 10)
                    tasks.append(task)
                    context.insert(task)
                }
            }
            try context.save()
            let chosen = ["project 1", "project 3"]
            let descriptor = RelatedFetchDescriptor(
                FetchDescriptor<RefTask>(
                    predicate: #Predicate { $0.priority >= 2 }, sortBy: [SortDescriptor(\.priority, order: .reverse)]),
                through: \.project,
                parent: FetchDescriptor<RefProject>(
                    predicate: #Predicate { chosen.contains($0.name) }, sortBy: [SortDescriptor(\.name)]))
            func expected() -> [String] {
                var titles: [String] = []
                for name in chosen {
                    let own = tasks.filter { $0.project?.name == name && $0.priority >= 2 }
                        .sorted { $0.id.isOrdered(before: $1.id) }
                        .sorted(using: [SortDescriptor(\RefTask.priority, order: .reverse)])
                    titles += own.map(\.title)
                }
                return titles
            }
            let found = try context.fetch(descriptor)
            #expect(found.map(\.title) == expected())
            // The same instances as every other read of this context.
            #expect(found.allSatisfy { object in tasks.contains { $0 === object } })
            // Unsaved: a task moved into a chosen project, one moved out, one deleted, one inserted.
            tasks[0].project = projects[1]
            tasks[0].priority = 9
            tasks[5].project = projects[2]
            context.delete(tasks[16])
            tasks.remove(at: 16)
            let newcomer = RefTask(title: "new", project: projects[3], priority: 5)
            context.insert(newcomer)
            tasks.append(newcomer)
            #expect(try context.fetch(descriptor).map(\.title) == expected())
            #expect(
                try context.explain(descriptor)
                    == "parents: scan; then children: index project, 1 key per parent")
        }
    }
}
