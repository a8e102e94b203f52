import Foundation
import KVStore
import Testing

/// The errors of `--where` operators and of `count`'s aggregates, pinned with their exit status: usage mistakes
/// (64, with the usage lines) for what the catalog shows to be wrong, failures (1) for unknown fields and for what
/// only the records show.
@Suite struct QueryErrorGoldenTests {
    static func usage(_ error: String, list: Bool = false) -> RunResult {
        RunResult(
            status: 64, output: "",
            errors: "Error: \(error)\n" + (list ? Self.listUsage : ErrorGoldenTests.countUsage))
    }

    static let listUsage = """
        Usage: kvtool list <path> <entity> [--where <condition> ...] [--sort <field[:desc]>] [--limit <n>]
                           [--offset <n>] [--fields <a,b>] [--json] [--table] [--explain]
          See 'kvtool help list' for more information.

        """

    @Test(arguments: [
        (
            "rank",
            "The value 'rank' is invalid for '--where <condition>': expected FIELD=VALUE, FIELD!=VALUE, FIELD<VALUE, "
                + "FIELD<=VALUE, FIELD>VALUE, FIELD>=VALUE or FIELD^=PREFIX"
        ),
        (
            "<=3",
            "The value '<=3' is invalid for '--where <condition>': expected FIELD=VALUE, FIELD!=VALUE, FIELD<VALUE, "
                + "FIELD<=VALUE, FIELD>VALUE, FIELD>=VALUE or FIELD^=PREFIX"
        ),
        ("rank<abc", "The value 'abc' is invalid for '--where rank<…': expected an integer"),
        ("size>=-1", "The value '-1' is invalid for '--where size>=…': expected a non-negative integer"),
        (
            "due>tomorrow",
            "The value 'tomorrow' is invalid for '--where due>…': expected an ISO 8601 date such as "
                + "2026-05-01 or 2026-05-01T10:00:00Z"
        ),
        (
            "isOpen<true",
            "'--where isOpen<…' needs an order, and bool fields have none; use isOpen=true or isOpen=false"
        ),
        ("score<null", "'--where score<…': null has no order; use score=null or score!=null"),
        (
            "tags>=false",
            "'--where tags>=…': bool values have no order; compare with a number, a string or a UUID, or use = or !="
        ),
        (
            "rank^=1",
            "'--where rank^=…' takes the prefix of a string, and rank is of kind int; compare it with =, !=, <, <=, > "
                + "or >="
        ),
        (
            #"rank<"5""#,
            "'--where rank<…': rank is of kind int, and the quoted value is a string; write the value without quotes"
        ),
    ])
    func malformedOrMeaninglessConditionsAreUsageErrors(_ condition: String, _ message: String) throws {
        let store = TemporaryStore()
        try ItemData.write(ItemData.random(count: 5, seed: 1), at: store.path)
        #expect(kvtool("count", store.path, "Item", "--where", condition) == Self.usage(message))
        #expect(kvtool("list", store.path, "Item", "--where", condition) == Self.usage(message, list: true))
    }

    @Test(arguments: [
        (
            ["--sum", "name"],
            "--sum name needs a number field, and name is of kind string; use --min, --max or --distinct"
        ),
        (
            ["--average", "due"],
            "--average due needs a number field, and due is of kind date; use --min, --max or --distinct"
        ),
        (
            ["--min", "isOpen"],
            "--min isOpen needs a field with an order, and bool fields have none; use --distinct or --group-by"
        ),
    ])
    func aggregatesOfFieldsOfTheWrongKindAreUsageErrors(_ arguments: [String], _ message: String) throws {
        let store = TemporaryStore()
        try ItemData.write(ItemData.random(count: 5, seed: 1), at: store.path)
        #expect(kvtool(arguments: ["count", store.path, "Item"] + arguments) == Self.usage(message))
    }

    @Test func unknownFieldsAreFailures() throws {
        let store = TemporaryStore()
        try ItemData.write(ItemData.random(count: 5, seed: 1), at: store.path)
        let unknown = RunResult(status: 1, output: "", errors: "Error: Unknown field 'nope': Item has no such field\n")
        #expect(kvtool("count", store.path, "Item", "--where", "nope>=1") == unknown)
        #expect(kvtool("count", store.path, "Item", "--where", "nope^=a") == unknown)
        #expect(kvtool("count", store.path, "Item", "--max", "nope") == unknown)
        #expect(kvtool("count", store.path, "Item", "--group-by", "nope") == unknown)
    }

    @Test func valuesOnlyTheRecordsShowToBeWrongAreFailures() throws {
        let store = TemporaryStore()
        let item = Item(
            id: ItemData.id(1), name: "n", rank: 1, score: nil, size: 1, weight: 1, group: "g1", level: 0,
            tags: ["red"], isOpen: false, due: nil, note: nil)
        try ItemData.write([item], at: store.path)
        // An array field's kind is `array`: what it holds is known only when read.
        #expect(
            kvtool("count", store.path, "Item", "--sum", "tags")
                == RunResult(
                    status: 1, output: "",
                    errors:
                        "Error: --sum tags needs numbers, and the record \(item.id) holds the string \"red\" there; "
                        + "choose a number field\n"))
    }
}
