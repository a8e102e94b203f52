import Foundation
import FuzzSupport
@_spi(Fuzzing) import KVStore

// Decodes random bytes as an index key. The first byte says how many components (1 to 3), the next ones the kind of
// each (an index into `IndexKeyFuzzing.indexableKinds`), the rest is the key. Decoding may throw, never trap; what
// decodes must encode again, and that encoding must decode and encode to the same bytes.

/// The kinds of the components that `header` describes, and the length of the header.
func components(_ bytes: UnsafeRawBufferPointer) -> (kinds: [String], headerLength: Int)? {
    guard let first = bytes.first else { return nil }
    let count = 1 + Int(first % 3)
    guard bytes.count > count else { return nil }
    let all = IndexKeyFuzzing.indexableKinds
    return ((1...count).map { all[Int(bytes[$0]) % all.count] }, 1 + count)
}

/// A seed: the header for `kinds`, then the key the public encoder builds for `values`.
func seed(_ values: [any IndexKeyEncodable], kinds: [String]) -> [UInt8] {
    var bytes = [UInt8(kinds.count - 1)]
    for kind in kinds {
        bytes.append(UInt8(IndexKeyFuzzing.indexableKinds.firstIndex(of: kind) ?? 0))
    }
    for value in values { value.appendIndexKey(to: &bytes) }
    return bytes
}

/// Writes the seeds when asked to: keys of each kind, extreme values and compounds, nils included.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: Corpus.Arguments) -> CInt {
    let uuid = Specimen.samples[0].id
    Corpus.writeIfRequested(arguments: Corpus.arguments(argc, argv)) {
        [
            seed([true], kinds: ["bool"]), seed([Int.min], kinds: ["int"]), seed([-1], kinds: ["int"]),
            seed([UInt64.max], kinds: ["uint"]), seed([Float(-0.5)], kinds: ["float"]),
            seed([Double.nan], kinds: ["double"]), seed([-Double.infinity], kinds: ["double"]),
            seed([Date(timeIntervalSinceReferenceDate: 800_000_000.5)], kinds: ["date"]),
            seed([uuid], kinds: ["uuid"]), seed([""], kinds: ["string"]), seed(["a\u{0}b"], kinds: ["string"]),
            seed(["Zoë 日本 🎉"], kinds: ["string"]), seed([Int?.none, "x"], kinds: ["int", "string"]),
            seed(["name", 0.25, uuid], kinds: ["string", "double", "uuid"]),
            seed([String?.none, Date?.none, false], kinds: ["string", "date", "bool"]),
        ]
    }
    return 0
}

/// Decodes one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // `fatalError` below is deliberate: it is how a target reports a broken property to libFuzzer, which saves the
    // input as a crash to replay. It never runs in the library or kvtool.
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let (kinds, headerLength) = components(bytes) else { return 0 }
    let key = UnsafeRawBufferPointer(rebasing: bytes[headerLength...])
    guard let once = try? IndexKeyFuzzing.reencode(key, componentKinds: kinds) else { return 0 }
    do {
        let twice = try once.withUnsafeBytes { try IndexKeyFuzzing.reencode($0, componentKinds: kinds) }
        guard once == twice else {
            fatalError("the key's encoding is not stable (\(kinds)):\nkey \(Array(key))\nonce \(once)\ntwice \(twice)")
        }
    } catch {
        fatalError("a decoded key's encoding does not decode (\(kinds)): \(error)\nkey \(Array(key))\nonce \(once)")
    }
    return 0
}
