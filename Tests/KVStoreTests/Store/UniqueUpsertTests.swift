import Foundation
import LMDB
import Testing

@testable import KVStore

/// A contact whose email is unique and merges on conflict, as SwiftData's `@Attribute(.unique)`.
struct UpsertContact: Model, Equatable {
    var id = UUID.timeOrdered()
    var email: String
    var name: String
    var companyID: UUID?
    var photo: ExternalData? = nil

    static let entity = Entity<UpsertContact>(
        name: "Contact",
        indexes: [.unique(\.email, onConflict: .update)],
        relationships: [.toOne("company", \.companyID, to: UpsertCompany.self, inverse: "contacts")],
        externalStorage: [.attribute(\.photo)])
}

struct UpsertCompany: Model, Equatable {
    var id = UUID.timeOrdered()
    var domain: String
    var name = ""

    static let entity = Entity<UpsertCompany>(
        name: "Company",
        indexes: [.unique(\.domain, onConflict: .update)],
        relationships: [.toMany("contacts", of: UpsertContact.self, inverse: \.companyID, deleteRule: .cascade)])
}

/// A model with two unique constraints that merge.
struct UpsertAccount: Model, Equatable {
    var id = UUID.timeOrdered()
    var login: String
    var email: String

    static let entity = Entity<UpsertAccount>(indexes: [
        .unique(\.login, onConflict: .update), .unique(\.email, onConflict: .update),
    ])
}

/// The same entity as ``UpsertContact`` in a program that does not declare its unique constraint.
struct ContactWithoutConstraint: Model, Equatable {
    var id = UUID.timeOrdered()
    var email: String
    var name: String
    var companyID: UUID?

    static let entity = Entity<ContactWithoutConstraint>(name: "Contact")
}

/// The same entity in a program that declares the constraint with the default policy.
struct ContactThatFails: Model {
    var id = UUID.timeOrdered()
    var email: String
    var name: String

    static let entity = Entity<ContactThatFails>(name: "Contact", indexes: [.unique(\.email)])
}

@Suite struct UniqueUpsertTests {
    @Test func aNewModelWithAHeldValueUpdatesTheStoredOne() throws {
        try withContainer(UpsertContact.self) { container throws in
            let context = ModelContext(container)
            let company = UpsertCompany(domain: "example.com")
            let stored = UpsertContact(email: "ada@example.com", name: "Ada", companyID: company.id)
            context.insert(company)
            context.insert(stored)
            try context.save()

            let incoming = UpsertContact(email: "ada@example.com", name: "Ada Lovelace")
            context.insert(incoming)
            let result = try context.save()
            #expect(result.mergedIDs == [incoming.id: stored.id])
            #expect(result.storedID(of: incoming.id) == stored.id)
            #expect(result.storedID(of: company.id) == company.id)

            // The stored identity survives with the new values; the new ID is not stored.
            let contacts = try ModelContext(container).fetch(FetchDescriptor<UpsertContact>())
            #expect(contacts == [UpsertContact(id: stored.id, email: "ada@example.com", name: "Ada Lovelace")])
            #expect(try context.model(for: incoming.id, as: UpsertContact.self) == nil)
            let byEmail = FetchDescriptor<UpsertContact>(predicate: #Predicate { $0.email == "ada@example.com" })
            #expect(try context.fetch(byEmail).map(\.id) == [stored.id])
        }
    }

    @Test func aMergedModelKeepsWhatRefersToIt() throws {
        try withContainer(UpsertContact.self) { container throws in
            let context = ModelContext(container)
            let company = UpsertCompany(domain: "example.com", name: "Example")
            let contact = UpsertContact(email: "ada@example.com", name: "Ada", companyID: company.id)
            context.insert(company)
            context.insert(contact)
            try context.save()

            // A sync brings the company again under a new ID: it merges, and its contacts stay its own.
            let again = UpsertCompany(domain: "example.com", name: "Example Inc.")
            context.insert(again)
            #expect(try context.save().storedID(of: again.id) == company.id)
            let children = try context.children(of: [company.id], through: \UpsertContact.companyID)
            #expect(children[company.id]?.map(\.id) == [contact.id])
            #expect(try context.model(for: company.id, as: UpsertCompany.self)?.name == "Example Inc.")
            // The delete rules act on the surviving identity.
            context.delete(UpsertCompany.self, id: company.id)
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<UpsertContact>()) == 0)
        }
    }

    /// A sync inserts a company and its contacts under new IDs; the company merges into the stored one, and the
    /// contacts, whichever order they were inserted in, follow it.
    @Test(arguments: [false, true])
    func referencesSavedToAMergedModelFollowIt(referrersFirst: Bool) throws {
        try withContainer(UpsertContact.self) { container throws in
            let context = ModelContext(container)
            let stored = UpsertCompany(domain: "example.com")
            context.insert(stored)
            try context.save()

            let incoming = UpsertCompany(domain: "example.com", name: "Synced")
            let contacts = [
                UpsertContact(email: "a@example.com", name: "A", companyID: incoming.id),
                UpsertContact(email: "b@example.com", name: "B", companyID: incoming.id),
            ]
            if referrersFirst { for contact in contacts { context.insert(contact) } }
            context.insert(incoming)
            if !referrersFirst { for contact in contacts { context.insert(contact) } }
            let result = try context.save()
            #expect(result.mergedIDs == [incoming.id: stored.id])

            let fresh = ModelContext(container)
            let saved = try fresh.fetch(FetchDescriptor<UpsertContact>()).sorted { $0.email < $1.email }
            #expect(saved.map(\.companyID) == [stored.id, stored.id])
            #expect(try fresh.children(of: [stored.id], through: \UpsertContact.companyID)[stored.id]?.count == 2)
            #expect(try fresh.fetchCount(FetchDescriptor<UpsertCompany>()) == 1)
        }
    }

    @Test func aMergingReferrerIsRedirectedUnderItsStoredID() throws {
        try withContainer(UpsertContact.self) { container throws in
            let context = ModelContext(container)
            let company = UpsertCompany(domain: "example.com")
            let contact = UpsertContact(email: "ada@example.com", name: "Ada")
            context.insert(company)
            context.insert(contact)
            try context.save()

            // Both sides arrive again under new IDs, each merging into its stored model.
            let newCompany = UpsertCompany(domain: "example.com", name: "Again")
            let newContact = UpsertContact(email: "ada@example.com", name: "Ada L.", companyID: newCompany.id)
            context.insert(newContact)
            context.insert(newCompany)
            let result = try context.save()
            #expect(result.mergedIDs == [newCompany.id: company.id, newContact.id: contact.id])
            let saved = try ModelContext(container).model(for: contact.id, as: UpsertContact.self)
            #expect(
                saved == UpsertContact(id: contact.id, email: "ada@example.com", name: "Ada L.", companyID: company.id))
        }
    }

    @Test func aStoredModelNeverTakesAnothersValue() throws {
        try withContainer(UpsertContact.self) { container throws in
            let context = ModelContext(container)
            let ada = UpsertContact(email: "ada@example.com", name: "Ada")
            var grace = UpsertContact(email: "grace@example.com", name: "Grace")
            context.insert(ada)
            context.insert(grace)
            try context.save()

            try context.modify(&grace) { $0.email = "ada@example.com" }
            let error = #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
            #expect(error?.message.contains("is already used by Contact \(ada.id)") == true)
            #expect(context.hasChanges)
            let fresh = ModelContext(container)
            #expect(try fresh.model(for: grace.id, as: UpsertContact.self)?.email == "grace@example.com")
            #expect(try fresh.model(for: ada.id, as: UpsertContact.self) == ada)
        }
    }

    @Test func aNewModelHeldByTwoStoredModelsIsAViolation() throws {
        try withContainer(UpsertAccount.self) { container throws in
            let context = ModelContext(container)
            let first = UpsertAccount(login: "ada", email: "ada@example.com")
            let second = UpsertAccount(login: "grace", email: "grace@example.com")
            context.insert(first)
            context.insert(second)
            try context.save()

            context.insert(UpsertAccount(login: "ada", email: "grace@example.com"))
            let error = #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
            #expect(error?.message.contains("but two stored models hold its unique values") == true)
            let accounts = try ModelContext(container).fetch(FetchDescriptor<UpsertAccount>())
            #expect(Set(accounts.map(\.id)) == [first.id, second.id])
            #expect(accounts.contains(first) && accounts.contains(second))

            // Matching one of them on both constraints merges.
            context.rollback()
            let again = UpsertAccount(login: "ada", email: "ada@example.com")
            context.insert(again)
            #expect(try context.save().storedID(of: again.id) == first.id)
        }
    }

    @Test func theMergedModelsExternalValuesReplaceTheStoredOnesAndNothingIsLeftBehind() throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(
            for: UpsertContact.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
        let context = ModelContext(container)
        let stored = UpsertContact(
            email: "ada@example.com", name: "Ada", photo: ExternalData(Data(repeating: 1, count: 300_000)))
        context.insert(stored)
        try context.save()
        let incoming = UpsertContact(
            email: "ada@example.com", name: "Ada", photo: ExternalData(Data(repeating: 2, count: 200_000)))
        context.insert(incoming)
        try context.save()
        let photo = try context.data(
            for: \.photo, of: try #require(try context.model(for: stored.id, as: UpsertContact.self)))
        #expect(photo == Data(repeating: 2, count: 200_000))
        try container.close()
        #expect(try integrityErrors(at: directory.path) == [])
    }

    /// A merging model whose external value is another stored model's: the value is copied to the surviving model,
    /// and the model it came from keeps its own bytes.
    @Test func aMergedModelCarryingAnotherModelsValueGetsACopy() throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(
            for: UpsertContact.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
        let context = ModelContext(container)
        let ada = UpsertContact(
            email: "ada@example.com", name: "Ada", photo: ExternalData(Data(repeating: 1, count: 10)))
        let grace = UpsertContact(
            email: "grace@example.com", name: "Grace", photo: ExternalData(Data(repeating: 2, count: 300_000)))
        context.insert(ada)
        context.insert(grace)
        try context.save()
        let storedGrace = try #require(try context.model(for: grace.id, as: UpsertContact.self))
        let incoming = UpsertContact(email: "ada@example.com", name: "Ada, again", photo: storedGrace.photo)
        context.insert(incoming)
        #expect(try context.save().storedID(of: incoming.id) == ada.id)
        let fresh = ModelContext(container)
        let merged = try #require(try fresh.model(for: ada.id, as: UpsertContact.self))
        #expect(merged.name == "Ada, again")
        #expect(try fresh.data(for: \.photo, of: merged) == Data(repeating: 2, count: 300_000))
        #expect(try fresh.data(for: \.photo, of: storedGrace) == Data(repeating: 2, count: 300_000))
        try container.close()
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func everyWriterMergesAndAProgramWithAnotherPolicyIsRefused() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let stored = UpsertContact(email: "ada@example.com", name: "Ada")
        do {
            let program = try ModelContainer(for: UpsertContact.self, configuration: configuration)
            try program.write { txn in try txn.insert(stored) }
            try program.close()
        }
        // A script that does not declare the constraint maintains it from the catalog, merging as the program does.
        let script = try ModelContainer(for: ContactWithoutConstraint.self, configuration: configuration)
        let incoming = ContactWithoutConstraint(email: "ada@example.com", name: "From the script")
        let context = ModelContext(script)
        context.insert(incoming)
        #expect(try context.save().storedID(of: incoming.id) == stored.id)
        #expect(
            try context.fetch(FetchDescriptor<ContactWithoutConstraint>()).map(\.name) == ["From the script"])
        try script.close()

        // The policy is in the catalog, and the store is format 3: programs that know no policy do not open it.
        let (format, entry) = try Self.catalog(at: directory.path)
        #expect(format == 3)
        #expect(entry.indexes.first { $0.name == "email" }?.onConflict == .update)

        // A program declaring the default policy would refuse what the others merge: it is refused at open.
        let error = #expect(throws: KVStoreError.incompatibleSchema) {
            try ModelContainer(for: ContactThatFails.self, configuration: configuration)
        }
        #expect(error?.message.contains("onConflict: .update") == true)
        #expect(try integrityErrors(at: directory.path) == [])
    }

    /// The store's format and the catalog entry of `Contact`, read with the binding.
    static func catalog(at path: String) throws -> (format: Int, entry: EntityCatalog) {
        let environment = try Environment.open(path: path)
        defer { try? environment.close() }
        let catalog = try environment.openTable(named: Catalog.tableName)
        return try environment.read { txn in
            let format = try #require(
                try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: catalog))
            let entry = try #require(
                try Catalog.read(EntityCatalog.self, key: Catalog.entityKey("Contact"), in: txn, table: catalog))
            return (format.formatVersion, entry)
        }
    }

    /// The catalog's conflict policy is written only when it is not `.fail`, reads back, and an unknown one (a
    /// newer program's) is refused as data that does not decode, never taken for `.fail`.
    @Test func theCatalogKeepsThePolicyAndRefusesOneItDoesNotKnow() throws {
        let merging = IndexCatalog(
            name: "email", fields: ["email"], isUnique: true, onConflict: .update, isMultiEntry: false, isReady: true,
            isDerivable: true)
        let failing = IndexCatalog(
            name: "email", fields: ["email"], isUnique: true, isMultiEntry: false, isReady: true, isDerivable: true)
        for index in [merging, failing] {
            let json = try JSONEncoder().encode(index)
            #expect(String(decoding: json, as: UTF8.self).contains("onConflict") == (index.onConflict != .fail))
            #expect(try Catalog.decoder.decode(IndexCatalog.self, from: json) == index)
        }
        #expect(!merging.hasSameDefinition(as: failing))
        let unknown = Data(
            #"{"name":"email","fields":["email"],"isUnique":true,"onConflict":"replaceAll","isMultiEntry":false,"isReady":true}"#
                .utf8)
        #expect(throws: DecodingError.self) { try Catalog.decoder.decode(IndexCatalog.self, from: unknown) }
    }
}
