import Foundation
import LMDB
import Testing

@testable import KVStore

@Suite struct ExternalStorageTests {
    static let chunk = ExternalValueTable.chunkSize

    @Test(arguments: [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 5])
    func valuesOfEverySizeRoundTrip(size: Int) throws {
        try withExternalContainer { container in
            let bytes = patternBytes(size)
            let photo = PhotoE(title: "Dunes", image: ExternalData(bytes))
            try container.write { txn in try txn.insert(photo) }
            #expect(try container.chunkCount(of: PhotoE.self) == chunks(for: size))

            let fetched = try #require(try container.read { txn in try txn.model(for: photo.id, as: PhotoE.self) })
            #expect(fetched.image.isStored)
            #expect(fetched.image.byteCount == size)
            #expect(fetched.thumbnail.byteCount == 0)
            #expect(try container.data(for: \.image, of: fetched) == bytes)
            #expect(try container.data(for: \.thumbnail, of: fetched).isEmpty)
        }
    }

    @Test func theRecordHoldsOnlyADescriptor() throws {
        try withExternalContainer { container in
            let photo = PhotoE(title: "Dunes", image: ExternalData(patternBytes(100_000)))
            try container.write { txn in try txn.insert(photo) }
            let store = try container.store(for: PhotoE.self)
            let recordSize = try container.environment.read { txn in
                try withKey(photo.id) { key in try txn.bytes(forKey: key, in: store.records)?.count }
            }
            #expect(try #require(recordSize) < 200)
        }
    }

    @Test func aContextSavesAndReadsValues() throws {
        try withExternalContainer { container in
            let context = ModelContext(container)
            let photo = PhotoE(title: "Dunes", image: ExternalData(patternBytes(5000)))
            context.insert(photo)
            // Before the save, the value is the one the model holds.
            #expect(try context.data(for: \.image, of: photo) == patternBytes(5000))
            try context.save()
            let fetched = try #require(try context.model(for: photo.id, as: PhotoE.self))
            #expect(try context.data(for: \.image, of: fetched) == patternBytes(5000))
        }
    }

    @Test func aContextStreamsValuesInAndOut() async throws {
        try await withExternalContainerAsync { container in
            let context = ModelContext(container)
            let photo = PhotoE(title: "Streamed")
            context.insert(photo)
            try context.save()
            let source = try TemporaryFile(contents: patternBytes(Self.chunk + 7))
            let handle = try FileHandle(forReadingFrom: source.url)
            let saved = try context.setData(for: \.image, of: photo, from: handle)
            try handle.close()
            #expect(saved.image.byteCount == Self.chunk + 7)
            var read = Data()
            for try await chunk in context.chunks(for: \.image, of: photo) { read.append(chunk) }
            #expect(read == patternBytes(Self.chunk + 7))
        }
    }

    @Test func savingAnUnchangedValueWritesNoChunk() throws {
        try withExternalContainer { container in
            let photo = PhotoE(title: "Dunes", image: ExternalData(patternBytes(2 * Self.chunk)))
            try container.write { txn in try txn.insert(photo) }
            var fetched = try #require(try container.read { txn in try txn.model(for: photo.id, as: PhotoE.self) })
            fetched.title = "Dunes at dawn"
            let (before, after) = try container.write { txn in
                let before = try txn.model(for: photo.id, as: PhotoE.self)?.image
                try txn.insert(fetched)
                return (before, try txn.model(for: photo.id, as: PhotoE.self)?.image)
            }
            // The same value ID: the chunks were neither rewritten nor replaced.
            #expect(before == after)
            #expect(after == fetched.image)
            #expect(try container.chunkCount(of: PhotoE.self) == 2)
            #expect(try container.data(for: \.image, of: fetched) == patternBytes(2 * Self.chunk))
        }
    }

    @Test func replacingAValueDeletesTheOldChunks() throws {
        try withExternalContainer { container in
            var photo = PhotoE(title: "Dunes", image: ExternalData(patternBytes(3 * Self.chunk)))
            try container.write { txn in try txn.insert(photo) }
            photo.image = ExternalData(patternBytes(10, seed: 9))
            try container.write { txn in try txn.insert(photo) }
            #expect(try container.chunkCount(of: PhotoE.self) == 1)
            #expect(try container.data(for: \.image, of: photo) == patternBytes(10, seed: 9))
            photo.image = ExternalData()
            try container.write { txn in try txn.insert(photo) }
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
            let fetched = try #require(try container.read { txn in try txn.model(for: photo.id, as: PhotoE.self) })
            #expect(fetched.image.byteCount == 0)
        }
    }

    @Test func aValueDecodedApartFromTheStoreIsRefused() throws {
        try withExternalContainer { container in
            let first = PhotoE(title: "First", image: ExternalData(patternBytes(10)))
            try container.write { txn in try txn.insert(first) }
            let fetched = try #require(try container.read { txn in try txn.model(for: first.id, as: PhotoE.self) })
            // Through JSON, the value is a descriptor alone: no one knows whose chunks it names, so nothing is copied.
            let decoded = try JSONDecoder().decode(ExternalData.self, from: try JSONEncoder().encode(fetched.image))
            let second = PhotoE(title: "Second", image: decoded)
            let error = try #require(throws: KVStoreError.self) {
                try container.write { txn in try txn.insert(second) }
            }
            #expect(error == .missingExternalData)
            #expect(error.entity == "PhotoE")
            #expect(error.field == "image")
            #expect(error.id == second.id)
            #expect(try container.read { txn in try txn.model(for: second.id, as: PhotoE.self) } == nil)
        }
    }

    @Test func encodingAValueNotSavedYetOutsideTheStoreThrows() throws {
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(ExternalData(Data([1, 2]))) }
    }
}

@Suite struct ExternalStorageDeleteTests {
    /// A photo with two values, of three chunks in all.
    func photo(_ title: String = "Photo") -> PhotoE {
        PhotoE(
            title: title, image: ExternalData(patternBytes(ExternalValueTable.chunkSize + 1)),
            thumbnail: ExternalData(patternBytes(100)))
    }

    @Test func aContextDeleteDeletesTheValues() throws {
        try withExternalContainer { container in
            let kept = photo("Kept")
            let deleted = photo("Deleted")
            try container.write { txn in
                try txn.insert(kept)
                try txn.insert(deleted)
            }
            #expect(try container.chunkCount(of: PhotoE.self) == 6)
            let context = ModelContext(container)
            context.delete(deleted)
            try context.save()
            #expect(try container.chunkCount(of: PhotoE.self) == 3)
            #expect(try container.data(for: \.image, of: kept).count == ExternalValueTable.chunkSize + 1)
        }
    }

    @Test func batchDeletesDeleteTheValues() throws {
        try withExternalContainer { container in
            let photos = (0..<6).map { photo("Photo \($0)") }
            try container.write { txn in for photo in photos { try txn.insert(photo) } }
            let context = ModelContext(container)
            #expect(try context.delete(PhotoE.self, ids: photos.prefix(2).map(\.id)) == 2)
            #expect(try container.chunkCount(of: PhotoE.self) == 12)
            #expect(try context.delete(PhotoE.self, where: #Predicate { $0.title == "Photo 2" }) == 1)
            #expect(try container.chunkCount(of: PhotoE.self) == 9)
            try container.write { txn in _ = try txn.delete(PhotoE.self, id: photos[3].id) }
            #expect(try container.chunkCount(of: PhotoE.self) == 6)
        }
    }

    @Test func aCascadeDeletesTheValuesOfEveryModelItReaches() throws {
        try withExternalContainer { container in
            let album = AlbumE(cover: ExternalData(patternBytes(10)))
            var photos = [photo(), photo()]
            for index in photos.indices { photos[index].albumID = album.id }
            try container.write { txn in
                try txn.insert(album)
                for photo in photos { try txn.insert(photo) }
            }
            try container.write { txn in _ = try txn.delete(AlbumE.self, id: album.id) }
            #expect(try container.chunkCount(of: AlbumE.self) == 0)
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
        }
    }

    @Test func nullifyDeletesOnlyTheDeletedModelsValues() throws {
        try withExternalContainer { container in
            let folder = FolderE(icon: ExternalData(patternBytes(10)))
            var photo = photo()
            photo.folderID = folder.id
            try container.write { txn in
                try txn.insert(folder)
                try txn.insert(photo)
            }
            try container.write { txn in _ = try txn.delete(FolderE.self, id: folder.id) }
            #expect(try container.chunkCount(of: FolderE.self) == 0)
            #expect(try container.chunkCount(of: PhotoE.self) == 3)
            let fetched = try #require(try container.read { txn in try txn.model(for: photo.id, as: PhotoE.self) })
            #expect(fetched.folderID == nil)
            #expect(try container.data(for: \.thumbnail, of: fetched) == patternBytes(100))
        }
    }

    @Test func denyKeepsEverythingWhenItRefusesAndDeletesTheValuesWhenItAllows() throws {
        try withExternalContainer { container in
            let vault = VaultE(key: ExternalData(patternBytes(10)))
            var photo = photo()
            photo.vaultID = vault.id
            try container.write { txn in
                try txn.insert(vault)
                try txn.insert(photo)
            }
            #expect(throws: KVStoreError.deleteDenied) {
                try container.write { txn in _ = try txn.delete(VaultE.self, id: vault.id) }
            }
            #expect(try container.chunkCount(of: VaultE.self) == 1)
            try container.write { txn in
                try txn.delete(PhotoE.self, id: photo.id)
                try txn.delete(VaultE.self, id: vault.id)
            }
            #expect(try container.chunkCount(of: VaultE.self) == 0)
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
        }
    }

    @Test func noActionDeletesOnlyTheDeletedModelsValues() throws {
        try withExternalContainer { container in
            let bin = BinE(label: ExternalData(patternBytes(10)))
            var photo = photo()
            photo.binID = bin.id
            try container.write { txn in
                try txn.insert(bin)
                try txn.insert(photo)
            }
            try container.write { txn in _ = try txn.delete(BinE.self, id: bin.id) }
            #expect(try container.chunkCount(of: BinE.self) == 0)
            #expect(try container.chunkCount(of: PhotoE.self) == 3)
        }
    }
}
