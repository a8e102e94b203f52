import Foundation
import FuzzSupport
@_spi(Fuzzing) import KVStore

// Decodes random bytes as a record, typed (a ``Specimen``, a dictionary of arrays of optionals) and as the
// schema-free tree kvtool reads. Decoding may throw, never trap; what decodes must encode, and its encoding must
// decode and encode again to the same bytes. A ``Specimen`` also decodes through its `FieldCodable` conformance, which
// must agree with `Codable`: both decode or neither does, and what they decode encodes to the same bytes both ways.

/// The codec, with the field table that encoding the samples builds.
let codec: RecordCodecFuzzing = {
    do {
        return try RecordCodecFuzzing(interning: Specimen.samples)
    } catch {
        Corpus.fail("the samples do not encode: \(error)")
    }
}()

/// Writes the seeds when asked to: each sample, and the samples' values as other types.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: Corpus.Arguments) -> CInt {
    Corpus.writeIfRequested(arguments: Corpus.arguments(argc, argv)) {
        try Specimen.samples.map { try codec.encode($0) } + [
            try codec.encode(["a": [1, nil, -3], "": []] as [String: [Int?]]),
            try codec.encode([Specimen.samples[0].id: 1.5] as [UUID: Double]),
        ]
    }
    return 0
}

/// Decodes one input every way, as it is and, for a record with a checksum, with its checksum made right: a changed
/// byte inside a record then reaches the decoders instead of stopping at the checksum.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    check(bytes)
    codec.resealed(bytes)?.withUnsafeBytes { check($0) }
    return 0
}

/// Decodes `bytes` every way.
func check(_ bytes: UnsafeRawBufferPointer) {
    // `fatalError` below is deliberate: it is how a target reports a broken property to libFuzzer, which saves the
    // input as a crash to replay. It never runs in the library or kvtool.
    checkTyped(Specimen.self, bytes)
    checkFields(bytes)
    checkTyped([String: [Int?]].self, bytes)
    if let tree = try? codec.reencodeTree(bytes) {
        let again: [UInt8]
        do {
            again = try tree.withUnsafeBytes { try codec.reencodeTree($0) }
        } catch {
            fatalError("the tree's own encoding does not decode: \(error)\ninput \(Array(bytes))\nencoding \(tree)")
        }
        guard again == tree else {
            fatalError("the tree's encoding is not stable:\ninput \(Array(bytes))\nonce \(tree)\ntwice \(again)")
        }
    }
}

/// Decodes `bytes` as `type` and, when that works, checks that the value encodes and decodes stably.
func checkTyped<T: Codable>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer) {
    guard let value = try? codec.decode(type, from: bytes) else { return }
    do {
        let once = try codec.encode(value)
        let decoded = try once.withUnsafeBytes { try codec.decode(type, from: $0) }
        let twice = try codec.encode(decoded)
        guard once == twice else {
            fatalError("\(type)'s encoding is not stable:\ninput \(Array(bytes))\nonce \(once)\ntwice \(twice)")
        }
    } catch {
        fatalError("a decoded \(type) does not round-trip: \(error)\ninput \(Array(bytes))")
    }
}

/// Decodes `bytes` as a ``Specimen`` through `FieldCodable` and through `Codable`, and checks that they agree.
func checkFields(_ bytes: UnsafeRawBufferPointer) {
    let viaFields = try? codec.decodeFields(Specimen.self, from: bytes)
    let viaCodable = try? codec.decode(Specimen.self, from: bytes)
    guard let viaFields, let viaCodable else {
        guard viaFields == nil, viaCodable == nil else {
            fatalError(
                "only \(viaFields == nil ? "Codable" : "FieldCodable") decodes the input:\ninput \(Array(bytes))")
        }
        return
    }
    do {
        let encodings = [
            try codec.encodeFields(viaFields), try codec.encode(viaFields), try codec.encodeFields(viaCodable),
            try codec.encode(viaCodable),
        ]
        guard Set(encodings).count == 1 else {
            fatalError("FieldCodable and Codable disagree:\ninput \(Array(bytes))\nencodings \(encodings)")
        }
    } catch {
        fatalError("a decoded Specimen does not encode: \(error)\ninput \(Array(bytes))")
    }
}
