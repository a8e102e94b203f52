import Foundation
import LMDB
import Testing

@testable import KVStore

/// A stored external value assigned to another model is copied when that model is saved: streamed through staging
/// before the save commits, after which each model owns its own chunks.
@Suite struct ExternalCopyTests {
    static let chunk = ExternalValueTable.chunkSize

    /// Stores a photo with an image of `size` bytes and returns it as fetched.
    static func storedPhoto(_ container: ModelContainer, size: Int, seed: UInt8 = 1) throws -> PhotoE {
        let photo = PhotoE(title: "Source", image: ExternalData(patternBytes(size, seed: seed)))
        try container.write { txn in try txn.insert(photo) }
        return try #require(try container.stored(PhotoE.self, photo.id))
    }

    @Test func aValueAssignedToAnotherModelIsCopiedAndEachOwnsItsChunks() throws {
        try withExternalContainer { container in
            let source = try Self.storedPhoto(container, size: 2 * Self.chunk + 3)
            let copy = PhotoE(title: "Copy", image: source.image)
            try container.write { txn in try txn.insert(copy) }

            #expect(try container.chunkCount(of: PhotoE.self) == 6)
            #expect(try container.stagedCount(of: PhotoE.self) == 0)
            let stored = try #require(try container.stored(PhotoE.self, copy.id))
            #expect(stored.image.byteCount == 2 * Self.chunk + 3)
            #expect(stored.image.descriptor?.valueID != source.image.descriptor?.valueID)
            #expect(try container.data(for: \.image, of: stored) == patternBytes(2 * Self.chunk + 3))

            // Deleting the source leaves the copy whole; replacing the copy leaves nothing behind.
            try container.write { txn in _ = try txn.delete(PhotoE.self, id: source.id) }
            #expect(try container.chunkCount(of: PhotoE.self) == 3)
            #expect(try container.data(for: \.image, of: stored) == patternBytes(2 * Self.chunk + 3))
            var replaced = stored
            replaced.image = ExternalData(patternBytes(4, seed: 8))
            try container.write { txn in try txn.insert(replaced) }
            #expect(try container.chunkCount(of: PhotoE.self) == 1)
        }
    }

    @Test func replacingTheCopyLeavesTheSourceIntact() throws {
        try withExternalContainer { container in
            let source = try Self.storedPhoto(container, size: Self.chunk + 1)
            let context = ModelContext(container)
            var copy = PhotoE(title: "Copy", image: source.image)
            context.insert(copy)
            try context.save()
            copy.image = ExternalData()
            context.insert(copy)
            try context.save()
            #expect(try container.chunkCount(of: PhotoE.self) == 2)
            #expect(try container.data(for: \.image, of: source) == patternBytes(Self.chunk + 1))
        }
    }

    @Test func aValueIsCopiedToAnotherEntityAndToAnotherFieldOfItsOwnModel() throws {
        try withOptionalExternalContainer { container in
            let source = try Self.storedPhoto(container, size: Self.chunk + 5)
            // Another entity's optional field, through a context.
            let context = ModelContext(container)
            let item = ItemE(title: "Item", photo: source.image)
            context.insert(item)
            // Another field of the source itself.
            var itself = source
            itself.thumbnail = source.image
            context.insert(itself)
            try context.save()

            let storedItem = try #require(try container.stored(ItemE.self, item.id))
            #expect(try container.data(for: \.photo, of: storedItem) == patternBytes(Self.chunk + 5))
            let storedSource = try #require(try container.stored(PhotoE.self, source.id))
            #expect(try container.data(for: \.thumbnail, of: storedSource) == patternBytes(Self.chunk + 5))
            #expect(try container.data(for: \.image, of: storedSource) == patternBytes(Self.chunk + 5))
            #expect(try container.chunkCount(of: ItemE.self) == 2)
            #expect(try container.chunkCount(of: PhotoE.self) == 4)

            // The item's copy outlives the photo, which takes both of its values with it.
            try container.write { txn in _ = try txn.delete(PhotoE.self, id: source.id) }
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
            #expect(try container.data(for: \.photo, of: storedItem) == patternBytes(Self.chunk + 5))
        }
    }

    @Test func aLargeValueIsCopiedABatchPerTransactionBeforeTheSaveCommits() throws {
        try withExternalContainer { container in
            let size = StreamedValueWriter<PhotoE>.batchSize + Self.chunk + 11
            let source = try Self.storedPhoto(container, size: size)
            let before = container.commitCount
            let copy = PhotoE(title: "Copy", image: source.image)
            try container.write { txn in try txn.insert(copy) }
            // Two batches of chunks in transactions of their own, then the save: never the whole value in one.
            #expect(container.commitCount - before == 3)
            #expect(try container.stagedCount(of: PhotoE.self) == 0)
            #expect(try container.chunkCount(of: PhotoE.self) == 2 * chunks(for: size))
            let stored = try #require(try container.stored(PhotoE.self, copy.id))
            #expect(try container.data(for: \.image, of: stored) == patternBytes(size))
        }
    }

    @Test func theSameValueAssignedToTwoModelsInOneSaveGivesEachItsOwnCopy() throws {
        try withExternalContainer { container in
            let source = try Self.storedPhoto(container, size: Self.chunk + 2)
            let first = PhotoE(title: "First", image: source.image)
            let second = PhotoE(title: "Second", image: source.image)
            let context = ModelContext(container)
            context.insert(first)
            context.insert(second)
            try context.save()
            #expect(try container.chunkCount(of: PhotoE.self) == 6)
            // A closure, not the key path `\.image.descriptor?.valueID`: projecting that key path trips the address
            // sanitizer inside the Swift 6.3.1 runtime (memcpy-param-overlap in KeyPath._projectReadOnly).
            let ids = try [first.id, second.id].map { try #require(try container.stored(PhotoE.self, $0)) }
                .compactMap { $0.image.descriptor?.valueID }
            #expect(Set(ids + [try #require(source.image.descriptor?.valueID)]).count == 3)

            context.delete(first)
            try context.save()
            #expect(try container.chunkCount(of: PhotoE.self) == 4)
            #expect(try container.data(for: \.image, of: second) == patternBytes(Self.chunk + 2))
            #expect(try container.data(for: \.image, of: source) == patternBytes(Self.chunk + 2))
        }
    }

    @Test func aSaveThatFailsAfterItsCopiesWereStagedKeepsNothingOfThem() throws {
        struct Refused: Error {}
        try withExternalContainer { container in
            let source = try Self.storedPhoto(container, size: 3 * Self.chunk)
            let copy = PhotoE(title: "Copy", image: source.image)
            #expect(throws: Refused.self) {
                try container.write { txn in
                    try txn.insert(copy)
                    throw Refused()
                }
            }
            #expect(try container.chunkCount(of: PhotoE.self) == 3)
            #expect(try container.stagedCount(of: PhotoE.self) == 0)
            #expect(try container.stored(PhotoE.self, copy.id) == nil)
        }
    }

    @Test func aBodyThatSwallowsTheCopyRequestStillSavesTheCopy() throws {
        try withExternalContainer { container in
            let source = try Self.storedPhoto(container, size: 10)
            let copy = PhotoE(title: "Copy", image: source.image)
            let attempts = try container.write { txn in
                // The first run's insert throws for the copy to be staged; the body must not commit without it.
                _ = try? txn.insert(copy)
                return try txn.model(for: copy.id, as: PhotoE.self) != nil
            }
            #expect(attempts)
            let stored = try #require(try container.stored(PhotoE.self, copy.id))
            #expect(try container.data(for: \.image, of: stored) == patternBytes(10))
            #expect(try container.chunkCount(of: PhotoE.self) == 2)
        }
    }

    @Test func anEmptyValueIsCopiedWithoutChunks() throws {
        try withExternalContainer { container in
            let source = try Self.storedPhoto(container, size: 0)
            let copy = PhotoE(title: "Copy", image: source.image)
            try container.write { txn in try txn.insert(copy) }
            let stored = try #require(try container.stored(PhotoE.self, copy.id))
            #expect(stored.image.byteCount == 0)
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
        }
    }
}

/// What a copy of an external value does with every bad input: an exact error, and nothing written.
@Suite struct ExternalCopyBadInputTests {
    @Test func aValueWhoseModelWasDeletedBeforeTheSaveIsRefused() throws {
        try withExternalContainer { container in
            let source = try ExternalCopyTests.storedPhoto(container, size: 3 * ExternalValueTable.chunkSize)
            try container.write { txn in _ = try txn.delete(PhotoE.self, id: source.id) }
            let copy = PhotoE(title: "Copy", image: source.image)
            let context = ModelContext(container)
            context.insert(copy)
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .missingExternalData)
            #expect(error.entity == "PhotoE")
            #expect(error.id == copy.id)
            #expect(error.field == "image")
            #expect(
                error.message == "PhotoE.image of \(copy.id) was given the value of PhotoE.image of \(source.id), "
                    + "and that PhotoE was deleted before the save, with its chunks; nothing of this save was written. "
                    + "Set the value from a model that is stored, or set its bytes with ExternalData(_:)")
            #expect(context.hasChanges)
            #expect(try container.stored(PhotoE.self, copy.id) == nil)
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
            #expect(try container.stagedCount(of: PhotoE.self) == 0)
        }
    }

    @Test func aValueItsModelNoLongerHoldsIsRefused() throws {
        try withExternalContainer { container in
            let source = try ExternalCopyTests.storedPhoto(container, size: 100)
            var replaced = source
            replaced.image = ExternalData(patternBytes(7, seed: 5))
            try container.write { txn in try txn.insert(replaced) }
            let copy = PhotoE(title: "Copy", image: source.image)
            let error = try #require(throws: KVStoreError.self) {
                try container.write { txn in try txn.insert(copy) }
            }
            #expect(error == .missingExternalData)
            #expect(error.id == copy.id)
            #expect(
                error.message.contains("which that PhotoE no longer holds whole: it was replaced since it was read"))
            #expect(error.message.contains("Fetch the PhotoE again and assign the value it holds now"))
            #expect(try container.stored(PhotoE.self, copy.id) == nil)
            #expect(try container.chunkCount(of: PhotoE.self) == 1)
        }
    }

    @Test func aCopyIntoAReadOnlyContainerIsRefused() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path)
        let source: PhotoE
        do {
            let container = try ModelContainer(for: externalModelTypes, configuration: configuration)
            source = try ExternalCopyTests.storedPhoto(container, size: 1000)
            try container.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/data.mdb"))
        var readOnly = configuration
        readOnly.isReadOnly = true
        let container = try ModelContainer(for: externalModelTypes, configuration: readOnly)
        let fetched = try #require(try container.stored(PhotoE.self, source.id))
        let copy = PhotoE(title: "Copy", image: fetched.image)
        let error = try #require(throws: KVStoreError.self) {
            try container.write { txn in try txn.insert(copy) }
        }
        #expect(error == .readOnly)
        #expect(try container.stored(PhotoE.self, copy.id) == nil)
        try container.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path + "/data.mdb")) == before)
    }

    @Test func aValueFromAnotherStoreIsRefused() throws {
        try withExternalContainer { other in
            let source = try ExternalCopyTests.storedPhoto(other, size: 50)
            try withExternalContainer { container in
                let copy = PhotoE(title: "Copy", image: source.image)
                let error = try #require(throws: KVStoreError.self) {
                    try container.write { txn in try txn.insert(copy) }
                }
                #expect(error == .missingExternalData)
                #expect(error.id == copy.id)
                #expect(error.field == "image")
                #expect(
                    error.message == "PhotoE.image of \(copy.id) was given the value of PhotoE.image of \(source.id) "
                        + "read from another store, whose chunks this store does not have; nothing of this save was "
                        + "written. Copy the bytes instead: ExternalData(try otherContainer.data(for:of:)), or stream "
                        + "them with setData(for:of:from:)")
                #expect(try container.stored(PhotoE.self, copy.id) == nil)
                #expect(try container.chunkCount(of: PhotoE.self) == 0)
            }
        }
    }

    @Test func aValueReadThroughAnotherContainerOfTheSameStoreIsCopied() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path)
        let reader = try ModelContainer(for: externalModelTypes, configuration: configuration)
        defer { try? reader.close() }
        let writer = try ModelContainer(for: externalModelTypes, configuration: configuration)
        defer { try? writer.close() }
        let source = try ExternalCopyTests.storedPhoto(writer, size: 300)
        let fetched = try #require(try reader.stored(PhotoE.self, source.id))
        let copy = PhotoE(title: "Copy", image: fetched.image)
        try writer.write { txn in try txn.insert(copy) }
        #expect(try writer.data(for: \.image, of: copy) == patternBytes(300))
        #expect(try writer.chunkCount(of: PhotoE.self) == 2)
    }
}
