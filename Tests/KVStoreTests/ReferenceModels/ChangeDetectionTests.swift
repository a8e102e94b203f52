import Foundation
import Testing

@testable import KVStore

/// A note whose attributes all have value semantics, so that a context finds its changes by comparing a copy of
/// them (its entity store has an ``ObjectLayout``).
final class ValueNote: PersistentModel {
    struct Address: Codable, Equatable {
        var street: String
        var lines: [String]
    }

    enum Mood: String, Codable {
        case calm, busy
    }

    var id = UUID.timeOrdered()
    var title: String
    var tags: [String] = ["one", "two"]
    var counts: [String: Int] = ["a": 1]
    var blob = Data([1, 2, 3])
    var largeBlob = Data(repeating: 7, count: 1_000)
    var address = Address(street: "Main", lines: ["1"])
    var mood = Mood.calm
    var dueAt: Date? = nil
    var score = 0.5
    @ToOne var folder: NoteFolder?

    init(title: String) {
        self.title = title
    }

    static let entity = Entity<ValueNote>(
        name: "ValueNote", indexes: [.index(\.title)], relationships: [.toOne("folder", \.folder, inverse: "notes")])
}

/// The folder of ``ValueNote``s.
final class NoteFolder: PersistentModel {
    var id = UUID.timeOrdered()
    var name: String
    @ToMany var notes: [ValueNote]

    init(name: String) {
        self.name = name
    }

    static let entity = Entity<NoteFolder>(
        name: "NoteFolder", relationships: [.toMany("notes", \.notes, inverse: "folder")])
}

/// A value an attribute holds by reference: its changes do not show in the object's bytes.
final class Settings: Codable {
    var level = 1
}

/// A note with an attribute of class type, whose changes a context finds by encoding it.
final class ReferenceNote: PersistentModel {
    var id = UUID.timeOrdered()
    var title = "note"
    var settings = Settings()

    static let entity = Entity<ReferenceNote>(name: "ReferenceNote")
}

/// A note with an enum attribute that has payloads, which the runtime does not list.
final class PayloadNote: PersistentModel {
    enum Kind: Codable {
        case plain
        case link(String)
    }

    var id = UUID.timeOrdered()
    var kind = Kind.link("https://example.com")

    static let entity = Entity<PayloadNote>(name: "PayloadNote")
}

/// A note whose attributes start past a multiple of 16 (after its relationship property) and include a value aligned
/// to 16 that holds a reference, which a shadow copies with its type's operations at its alignment.
final class WideNote: PersistentModel {
    struct Wide: Codable, Equatable {
        var label: String
        var value: UInt128
    }

    @ToOne var folder: NoteFolder?
    var id = UUID.timeOrdered()
    var count: Int64 = 1
    var wide = Wide(label: "first", value: UInt128.max - 1)

    static let entity = Entity<WideNote>(name: "WideNote", relationships: [.toOne("folder", \.folder)])
}

/// A context finds the changes of reference models without encoding them when their attributes have value semantics,
/// and by encoding them otherwise; every kind of change is found either way.
@Suite struct ChangeDetectionTests {
    /// Saves `object` through a context that is gone by the time the test reads it, and returns its ID.
    private func saved<M: PersistentModel>(_ object: M, in container: ModelContainer) throws -> UUID {
        let context = ModelContext(container)
        context.insert(object)
        try context.save()
        return object.id
    }

    @Test func onlyClassesWhoseAttributesHaveValueSemanticsCompareTheirBytes() throws {
        #expect(ObjectLayout(of: ValueNote.self) != nil)
        #expect(ObjectLayout(of: NoteFolder.self) != nil)
        #expect(ObjectLayout(of: ReferenceNote.self) == nil)
        #expect(ObjectLayout(of: PayloadNote.self) == nil)
        #expect(ValueSemantics.isTrusted([String: [Date?]].self))
        #expect(ValueSemantics.isTrusted(ValueNote.Address.self))
        #expect(!ValueSemantics.isTrusted([Settings].self))
        #expect(!ValueSemantics.isTrusted((Int, String).self))
        #expect(!ValueSemantics.isTrusted((any Codable).self))
        #expect(!ValueSemantics.isTrusted(AnyObject.self))
    }

    /// Each change, made in place on a value the object alone holds (where a copy-on-write buffer is changed without
    /// copying), is found, saved and read back.
    @Test(arguments: [
        "tags.append", "tags[0]", "counts", "blob[0]", "largeBlob[0]", "largeBlob.append", "address.street.append",
        "address.lines.append", "mood", "dueAt", "score", "title.append",
    ])
    func everyChangeInPlaceIsFoundAndSaved(change: String) throws {
        try withContainer(ValueNote.self, NoteFolder.self) { container in
            let id = try saved(ValueNote(title: "first"), in: container)
            let context = ModelContext(container)
            let note = try #require(try context.model(for: id, as: ValueNote.self))
            #expect(!context.hasChanges)
            switch change {
            case "tags.append": note.tags.append("three")
            case "tags[0]": note.tags[0] = "zero"
            case "counts": note.counts["a", default: 0] += 1
            case "blob[0]": note.blob[0] = 9
            case "largeBlob[0]": note.largeBlob[500] = 9
            case "largeBlob.append": note.largeBlob.append(contentsOf: [1, 2, 3])
            case "address.street.append": note.address.street.append(" Street")
            case "address.lines.append": note.address.lines.append("2")
            case "mood": note.mood = .busy
            case "dueAt": note.dueAt = Date(timeIntervalSince1970: 1_000)
            case "score": note.score = 0.75
            default: note.title.append(" edited")
            }
            #expect(context.hasChanges)
            try context.save()
            #expect(!context.hasChanges)
            let reread = try #require(try ModelContext(container).model(for: id, as: ValueNote.self))
            #expect(reread.tags == note.tags)
            #expect(reread.counts == note.counts)
            #expect(reread.blob == note.blob)
            #expect(reread.largeBlob == note.largeBlob)
            #expect(reread.address == note.address)
            #expect(reread.mood == note.mood)
            #expect(reread.dueAt == note.dueAt)
            #expect(reread.score == note.score)
            #expect(reread.title == note.title)
        }
    }

    /// An attribute set back to an equal value held in other memory (a string built anew, an array of equal
    /// elements) is no change: the save writes nothing, so another context's change to the same model stays.
    @Test func anEqualValueInOtherMemoryIsNoChange() throws {
        try withContainer(ValueNote.self, NoteFolder.self) { container in
            let long = String(repeating: "a title long enough to live outside the string's own bytes ", count: 2)
            let id = try saved(ValueNote(title: long), in: container)
            let context = ModelContext(container)
            let note = try #require(try context.model(for: id, as: ValueNote.self))
            note.title = String(long.reversed())
            note.tags = ["changed"]
            #expect(context.hasChanges)
            note.title = String(String(long.reversed()).reversed())
            note.tags = Array(["one", "two"].reversed().reversed())
            #expect(!context.hasChanges)
            let other = ModelContext(container)
            try #require(try other.model(for: id, as: ValueNote.self)).score = 2
            try other.save()
            try context.save()
            #expect(try ModelContext(container).model(for: id, as: ValueNote.self)?.score == 2)
            // A real change among equal ones is found.
            note.title = String(String(long.reversed()).reversed())
            note.tags.append("three")
            #expect(context.hasChanges)
        }
    }

    /// A shadow places each attribute at its type's alignment, wherever its elements start: a value aligned to 16
    /// that holds a reference is copied, compared, exchanged and restored in place.
    @Test func aShadowKeepsEachAttributesAlignment() throws {
        let layout = try #require(ObjectLayout(of: WideNote.self))
        #expect(MemoryLayout<WideNote.Wide>.alignment == 16)
        // The attributes start past a multiple of 16 (right after the relationship property's storage); the allocation
        // has room for the shift its layout expects.
        #expect(layout.start % 16 != 0)
        #expect(FieldShadow.of(WideNote(), layout: layout).shift(start: layout.start) == layout.shadowShift)
        for _ in 0..<64 {
            let note = WideNote()
            let shadow = FieldShadow.of(note, layout: layout)
            #expect(shadow.compare(note) == .same)
            note.wide.label.append(" edited")
            note.wide.value = 7
            #expect(shadow.compare(note) != .same)
            let shadowed = shadow.withShadowValues(in: note) { note.wide }
            #expect(shadowed == WideNote.Wide(label: "first", value: UInt128.max - 1))
            #expect(note.wide == WideNote.Wide(label: "first edited", value: 7))
            shadow.restore(into: note)
            #expect(note.wide == WideNote.Wide(label: "first", value: UInt128.max - 1))
            #expect(shadow.matches(note))
        }
    }

    /// A shadow retaken from its object holds the object's values as they are (references counted, the values it
    /// held released), at its alignment: it matches the object, and restores those values after later changes.
    @Test func aRetakenShadowHoldsTheObjectsValuesAsTheyAre() throws {
        let layout = try #require(ObjectLayout(of: WideNote.self))
        for round in 0..<64 {
            let note = WideNote()
            let shadow = FieldShadow.of(note, layout: layout)
            let label = String(repeating: "a label long enough to live in its own storage ", count: 2) + "\(round)"
            note.wide = WideNote.Wide(label: label, value: UInt128(round))
            note.count = Int64(round)
            #expect(shadow.compare(note) != .same)
            shadow.retake(from: note)
            #expect(shadow.matches(note))
            #expect(shadow.compare(note, mayMatch: false) == .same)
            note.wide.label = "edited"
            note.count = -1
            shadow.restore(into: note)
            #expect(note.wide == WideNote.Wide(label: label, value: UInt128(round)))
            #expect(note.count == Int64(round))
        }
    }

    /// A save that writes a changed object makes its values those the next check compares with: saved again and
    /// again with values in their own storage, the object has no changes after each save, a rollback gives back the
    /// last saved values, and a save of an unchanged object writes nothing over another context's change.
    @Test func eachSaveOfAChangedObjectIsWhatTheNextComparesWith() throws {
        try withContainer(ValueNote.self, NoteFolder.self) { container in
            let id = try saved(ValueNote(title: "first"), in: container)
            let context = ModelContext(container)
            let note = try #require(try context.model(for: id, as: ValueNote.self))
            let folder = NoteFolder(name: "inbox")
            for round in 0..<5 {
                let title = String(repeating: "a title in its own storage ", count: 3) + "\(round)"
                note.title = title
                note.tags.append("round \(round)")
                note.score = Double(round)
                note.folder = round.isMultiple(of: 2) ? folder : nil
                #expect(context.hasChanges)
                try context.save()
                #expect(!context.hasChanges)
                let saved = (note.title, note.tags, note.score, note.folder?.id)
                note.title = "unsaved"
                note.tags = []
                note.folder = NoteFolder(name: "unsaved")
                #expect(context.hasChanges)
                context.rollback()
                #expect(!context.hasChanges)
                #expect((note.title, note.tags, note.score, note.folder?.id) == saved)
                // Read through its ID: the context that read it is gone, and with it the way to load its folder.
                let stored = try #require(try ModelContext(container).model(for: id, as: ValueNote.self))
                #expect((stored.title, stored.tags, stored.score, stored.$folder.id) == saved)
            }
            let other = ModelContext(container)
            try #require(try other.model(for: id, as: ValueNote.self)).counts = ["elsewhere": 1]
            try other.save()
            try context.save()
            #expect(try ModelContext(container).model(for: id, as: ValueNote.self)?.counts == ["elsewhere": 1])
        }
    }

    @Test func aChangeInsideAnAttributeOfClassTypeIsFoundByEncoding() throws {
        try withContainer(ReferenceNote.self) { container in
            let id = try saved(ReferenceNote(), in: container)
            let context = ModelContext(container)
            let note = try #require(try context.model(for: id, as: ReferenceNote.self))
            #expect(!context.hasChanges)
            note.settings.level = 3
            #expect(context.hasChanges)
            try context.save()
            #expect(try ModelContext(container).model(for: id, as: ReferenceNote.self)?.settings.level == 3)
        }
    }

    /// A class compared by encoding (an attribute of class type) saves what changed, leaves what did not, and rolls
    /// back to its fetched values.
    @Test func aClassComparedByEncodingSavesAndRollsBack() throws {
        try withContainer(ReferenceNote.self) { container in
            let firstID = try saved(ReferenceNote(), in: container)
            let secondID = try saved(ReferenceNote(), in: container)
            let context = ModelContext(container)
            let first = try #require(try context.model(for: firstID, as: ReferenceNote.self))
            let second = try #require(try context.model(for: secondID, as: ReferenceNote.self))
            first.title = "renamed"
            first.settings.level = 5
            #expect(context.hasChanges)
            context.rollback()
            #expect(!context.hasChanges)
            #expect(first.title == "note" && first.settings.level == 1)
            // Another context changes the second note; this one changes only the first, and must not write the
            // second back.
            let other = ModelContext(container)
            try #require(try other.model(for: secondID, as: ReferenceNote.self)).title = "elsewhere"
            try other.save()
            first.settings.level = 7
            try context.save()
            let fresh = ModelContext(container)
            #expect(try fresh.model(for: firstID, as: ReferenceNote.self)?.settings.level == 7)
            #expect(try fresh.model(for: secondID, as: ReferenceNote.self)?.title == "elsewhere")
            #expect(second.title == "note")
        }
    }

    @Test func aRollbackRestoresChangesMadeInPlaceAndRelationships() throws {
        try withContainer(ValueNote.self, NoteFolder.self) { container in
            let (noteID, folderID) = try {
                let context = ModelContext(container)
                let folder = NoteFolder(name: "inbox")
                let note = ValueNote(title: "first")
                note.folder = folder
                context.insert(note)
                try context.save()
                return (note.id, folder.id)
            }()
            let context = ModelContext(container)
            let note = try #require(try context.model(for: noteID, as: ValueNote.self))
            let before = (note.tags, note.counts, note.address, note.title)
            note.tags.append("three")
            note.counts["b"] = 2
            note.address.lines[0] = "changed"
            note.title = "renamed"
            note.folder = NoteFolder(name: "elsewhere")
            #expect(context.hasChanges)
            context.rollback()
            #expect(!context.hasChanges)
            #expect(note.tags == before.0)
            #expect(note.counts == before.1)
            #expect(note.address == before.2)
            #expect(note.title == before.3)
            #expect(note.folder?.id == folderID)
            #expect(note.$folder.id == folderID)
            // The rolled-back object is unchanged: a save writes nothing, and a change after it is found again.
            note.tags.append("again")
            try context.save()
            #expect(try ModelContext(container).model(for: noteID, as: ValueNote.self)?.tags == before.0 + ["again"])
        }
    }

    @Test func aSaveLetsGoOfTheObjectsNothingElseHolds() throws {
        try withContainer(ValueNote.self, NoteFolder.self) { container in
            let context = ModelContext(container)
            for number in 0..<3 { context.insert(ValueNote(title: "note \(number)")) }
            try context.save()
            var kept = try context.fetch(FetchDescriptor<ValueNote>(sortBy: [SortDescriptor(\.title)]))
            weak let dropped = kept.removeLast()
            #expect(dropped != nil)
            try context.save()
            #expect(dropped == nil)
            // The objects still held stay the context's.
            let again = try context.fetch(FetchDescriptor<ValueNote>(sortBy: [SortDescriptor(\.title)]))
            #expect(again.count == 3)
            #expect(zip(kept, again).allSatisfy { $0 === $1 })
        }
    }

    /// An object unchanged in the context answers a fetch as the store does (SwiftData's fetches do too); a changed
    /// one answers with its values as they are now.
    @Test func aFetchTakesTheStoresAnswerForObjectsUnchangedHere() throws {
        try withContainer(ValueNote.self, NoteFolder.self) { container in
            let id = try saved(ValueNote(title: "first"), in: container)
            let context = ModelContext(container)
            let note = try #require(try context.model(for: id, as: ValueNote.self))
            let other = ModelContext(container)
            try #require(try other.model(for: id, as: ValueNote.self)).title = "renamed elsewhere"
            try other.save()
            let renamed = try context.fetch(
                FetchDescriptor<ValueNote>(predicate: #Predicate { $0.title == "renamed elsewhere" }))
            #expect(renamed.count == 1 && renamed[0] === note)
            #expect(note.title == "first")
            let first = try context.fetch(FetchDescriptor<ValueNote>(predicate: #Predicate { $0.title == "first" }))
            #expect(first.isEmpty)
            note.title = "changed here"
            let changed = try context.fetch(
                FetchDescriptor<ValueNote>(predicate: #Predicate { $0.title == "changed here" }))
            #expect(changed.count == 1 && changed[0] === note)
            #expect(
                try context.fetch(FetchDescriptor<ValueNote>(predicate: #Predicate { $0.title == "renamed elsewhere" }))
                    .isEmpty)
        }
    }
}
