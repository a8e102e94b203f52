import FuzzSupport
@_spi(Fuzzing) import KVToolCore

// Parses random bytes as one line of `kvtool import`, against the catalog of a store of ``Specimen`` records.
// Parsing may throw, never trap; JSON that parses must write back as JSON that parses to the same value, and a record
// that parses must encode into bytes that decode.

/// The import parser, with the catalog of a store that existed only while it was read.
let importer: ImportFuzzing = {
    do {
        return try SpecimenStore.with { path in try ImportFuzzing(storePath: path) }
    } catch {
        Corpus.fail("cannot read the catalog of a specimen store: \(error)")
    }
}()

/// Writes the seeds when asked to: what `kvtool export` writes for a store of the samples. Otherwise reads the
/// catalog now, before fuzzing starts.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: Corpus.Arguments) -> CInt {
    Corpus.writeIfRequested(arguments: Corpus.arguments(argc, argv)) {
        try SpecimenStore.with { path in try SpecimenStore.exportedLines(of: path) }
    }
    _ = importer
    return 0
}

/// Parses one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // `fatalError` below is deliberate: it is how a target reports a broken property to libFuzzer, which saves the
    // input as a crash to replay. It never runs in the library or kvtool.
    let line = Array(UnsafeBufferPointer(start: data, count: size))
    if ImportFuzzing.jsonRoundTrips(line) == false {
        fatalError("JSON does not read back as the same value after writing it: \(line)")
    }
    do {
        _ = try importer.parse(line)
    } catch let error as ImportFuzzing.RecordError {
        fatalError("\(error)\nline \(line)")
    } catch {
        // A line import rejects: what is expected of random bytes.
    }
    return 0
}
