import CommandLineKit
import Testing

@testable import KVToolCore

/// Help texts and the version, pinned.
@Suite struct HelpGoldenTests {
    static let mainHelp = """
        OVERVIEW: Inspects KVStore stores from their catalog alone: schema, records, integrity, export and
        import; replicates them through NATS JetStream.

        USAGE: kvtool <subcommand> [<options>] <arguments>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          info                    Show the store's format, sizes, readers and tables.
          schema                  Show each entity's fields, indexes, constraints and relationships.
          count                   Count an entity's records, or those that meet conditions.
          list                    List an entity's records, as a table or as JSON Lines.
          get                     Print records by ID as pretty JSON, with their related records.
          extract                 Write a record's external value to a file, chunk by chunk.
          history                 List the store's change history: what each commit changed.
          export                  Export records as JSON Lines, losslessly.
          import                  Import JSON Lines (as 'export' writes them), checked first.
          check                   Check the store's integrity: catalog, records, indexes, references.
          copy                    Copy the store to a new directory as a consistent snapshot.
          readers                 List the reader slots in use; clear those of dead processes.
          replicate-publish       Publish the store's change history to a stream, for replicas.
          replicate-follow        Apply the primary's commits from a stream to a replica.
          replicate-status        Show how far a replica is behind the stream it follows.
          help                    Show kvtool's help, or a subcommand's.

          See 'kvtool help <subcommand>' for detailed help.

        Stores are opened read-only, except by 'import' and 'replicate-follow'; the 'replicate-*' commands
        open them through the library, as a program does, and connect to NATS servers. Results go to
        standard output; errors, warnings and progress to standard error. Exit status: 0 on success, 1 on
        failure (a write that failed included: a full disk, a closed pipe), 2 when 'check' cannot read the
        store at all, 64 for a usage mistake, 65 for an import's invalid input (nothing written).

        SAFETY: Read-only commands create nothing in the store's directory, and write nothing there but
        their reader slot in an existing lock.mdb ('replicate-publish' and 'replicate-status', which open
        the store as a program does, create a missing lock.mdb). A store without a lock file (a copy, the
        store of a stopped program) is read without one, so none is created; the command fails if a program
        opened the store meanwhile. Run as another user than the store's owner (root, say), kvtool never
        leaves a lock.mdb the owner cannot open: 'import' and the 'replicate-*' commands refuse a store
        without one unless run as its owner. A lock.mdb that is a symbolic link, a hard link, a FIFO or a
        device, and a data.mdb that is not a regular file, are refused: a check right before the open, not a
        guarantee against someone who swaps the files meanwhile. Files kvtool writes are new (written under
        a temporary name, renamed into place once complete), mode 0600 unless --mode is given, and replace
        an existing file only with --force, and only a regular file of your own.

        """

    static let countHelp = """
        OVERVIEW: Count an entity's records, or those that meet conditions.

        USAGE: kvtool count <path> <entity> [--where <condition> ...] [--sum <field>] [--average <field>]
                            [--min <field>] [--max <field>] [--distinct <field>] [--group-by <field>]
                            [--explain] [--json]

        ARGUMENTS:
          <path>                  The store's directory (the one that holds data.mdb).
          <entity>                The entity, as the catalog names it (see 'kvtool schema').

        OPTIONS:
          --where <condition>     Only records that meet a condition: field=value, field!=value,
                                  field<value, field<=value, field>value, field>=value, or field^=prefix for
                                  a string's prefix (quote < and > in a shell). The value is parsed as the
                                  field's kind (int, uint, double, bool, string, uuid, ISO 8601 date, or
                                  null); strings compare by the bytes of their NFC form, as the index orders
                                  them. Repeat to require several.
          --sum <field>           Also print the sum of a number field.
          --average <field>       Also print the average of a number field.
          --min <field>           Also print the smallest value of a field.
          --max <field>           Also print the largest value of a field.
          --distinct <field>      Also print how many distinct values a field holds.
          --group-by <field>      Count (and aggregate) the records of each value of a field.
          --explain               Print the plan (the index, its keys or range, whether the count is exact)
                                  instead of the results.
          --json                  Print JSON for scripts instead of text for people.
          --version               Show the version.
          -h, --help              Show help information.

        Without conditions the count is the record table's size. Equalities on the fields of a ready index
        are looked up in the index, and order and prefix conditions on a field read a range of its index (of
        a compound index, after equalities on the fields before it); the entries are counted without reading
        records when the index decides every condition (the plan then ends with '(exact)'). Other
        conditions, and '!=', are checked on each record read, or on each record of a scan. --explain prints
        the plan instead of counting.

        Conditions: '!=' holds for exactly the records '=' leaves out (a null or absent value, an array
        without an equal element). Order conditions and prefixes hold for no null or absent value, and for
        an array when one of its elements meets them. Numbers compare numerically (-0.0 equals 0.0, NaN is
        above infinity), strings by the UTF-8 bytes of their NFC form (the index's order), UUIDs by their
        bytes, dates by time; a value of another kind than the field's never meets one. Booleans, data,
        URLs, decimals and containers have no order.

        Aggregates: --sum and --average take a number field (an integer sum is exact, and an error when it
        does not fit in 64 bits; an average is a double); --min and --max a field with an order (numbers,
        strings in the index's order, UUIDs, dates); --distinct counts different values. Null and absent
        values are left out, but for --distinct, which counts null as a value; an array field gives each
        element. --group-by counts and aggregates each value of a field apart: null, absent and empty-array
        values are one group, an array counts in the group of each element. Without conditions, --min and
        --max of a field with a ready index read one entry of it. Memory holds the groups and distinct
        values, never the records.

        A scan reports the damage 'list' reports (a key that is not a record key, a table whose own count
        differs from the entries read) after the count of the records it could read, and the exit status is
        1.

        """

    static let importHelp = """
        OVERVIEW: Import JSON Lines (as 'export' writes them), checked first.

        USAGE: kvtool import <path> [<file>] [--on-conflict <policy>] [--resume] [--abandon] [--dry-run]
                             [--chunk-size <n>] [--chunk-bytes <n>] [--scratch-directory <dir>]

        ARGUMENTS:
          <path>                  The store's directory (the one that holds data.mdb).
          <file>                  The JSON Lines file, or '-' for standard input (none with --abandon).

        OPTIONS:
          --on-conflict <policy>  What a record whose ID or unique value is stored does. (values: fail,
                                  replace, skip; default: fail)
          --resume                Finish the import that stopped, from the same input.
          --abandon               Forget the import that stopped; what it wrote stays.
          --dry-run               Check the input and report, writing nothing.
          --chunk-size <n>        How many records one transaction handles. (default: 10000)
          --chunk-bytes <n>       The most bytes of external values per transaction. (default: 16 MiB)
          --scratch-directory <dir>
                                  Where the import keeps what it remembers of the input. (default: $TMPDIR,
                                  or /tmp)
          --version               Show the version.
          -h, --help              Show help information.

        The whole input is checked before anything is written: an input with any problem changes nothing,
        and each problem is reported with its line (exit status 65). Each line must be well-formed JSON
        without a member named twice, of a kind this kvtool reads (header, record, chunk, delete, end). A
        record must belong to an entity of the store or of the export's catalog, hold its ID as its id field
        and only fields those catalogs name, each top-level one of the kind the catalog records for it, and
        be followed by a chunk line for each chunk its external values' descriptors name, of the right size.
        No ID may appear twice, no unique value twice or held by another stored record; references through
        relationships that do not allow dangling IDs must name records of the input or of the store;
        required fields must be there; an export must end with its end line, whose counts must match.

        Required fields: the catalog does not record whether the program's model makes a field optional, so
        the records are the evidence. A field is required when every record of the entity that the export
        holds has a value for it (its end line lists them) and every record the store holds has one; with
        neither an export nor stored records, only id is.

        Then the input is read again and written, a chunk of records per write transaction, each index kept
        by the library's derivation and new field names interned in the catalog in the same transaction. A
        value larger than --chunk-bytes is staged over several transactions, as the library stages streamed
        values. Each transaction reads the catalog's generation, and stops the import when another writer
        changed the schema of what it writes (an index added meanwhile is maintained), so an import runs
        beside a live program. It also writes the catalog entry 'import' with the line to go on from; the
        last one deletes it. After a failure (a full disk, a killed process) the store is consistent, and
        'kvtool import --resume' with the same input checks the rest of it again, deletes the staged chunks
        of the value that was under way, and finishes the import; --abandon forgets it instead.

        An incremental export ('kvtool export --since'; its header has "since") carries its source's changes
        after a history token to a copy of the source: its records replace the stored ones (--on-conflict
        replace is its default, and the only policy it takes), and each delete line deletes its record, with
        its index entries and external values, if the store holds it, and does nothing otherwise. Delete
        lines come before the records, so that the unique values they free are free for the records. No
        delete rule is applied: the source's cascades and nullifications are in the export as changes of
        their own. A reference to a deleted record, from the input or from a stored record the input neither
        replaces nor deletes, is a problem: the copy then differs from its source. So are two stored records
        that traded unique values since the token (each value is held by the other when its record is
        checked). Make a new copy from a full export then. Apply incremental exports in order, each from the
        token the previous one went through (its header's "through"). A store whose history is on records
        the import's changes, deletes included, as its own entries.

        An empty store (no entities, or no store at the path, which is then created) gets the export's whole
        catalog and schema version; a store with entities gets those of the export's entities that it lacks
        and the input has records of, and keeps its own catalog for the others.

        A record whose ID is stored is a problem, unless --on-conflict says otherwise: replace writes it in
        place of the stored one (deleting the external values it replaces), skip keeps the stored one. A
        unique value that another stored record holds is a problem under replace too, since replacing that
        record would mean deleting it, whose delete rules kvtool does not apply; skip skips the record.

        Exit status: 0 when everything was imported (with --dry-run, when it would be), 65 for an invalid
        input, 1 for a failure (the message says whether to resume), 64 for a usage mistake. Standard input
        is copied to the scratch directory, to be read twice.

        A store without a lock file gets one, which LMDB creates: run as another user than the store's owner
        (root, say), kvtool refuses such a store rather than leave a lock.mdb the owner cannot open; run it
        as the owner instead. A store that has its lock file may be imported into by any user who can write
        it.

        """

    static let exportHelp = """
        OVERVIEW: Export records as JSON Lines, losslessly.

        USAGE: kvtool export <path> [<entity> ...] [--output <file>] [--force] [--mode <mode>]
                             [--chunk-size <n>] [--since <token>]

        ARGUMENTS:
          <path>                  The store's directory (the one that holds data.mdb).
          <entity>                The entities whose records to export; all of them by default.

        OPTIONS:
          --output <file>         Write to this new file instead of standard output.
          --force                 Replace the file if it exists; only a regular file of your own, never a
                                  link, FIFO or device.
          --mode <mode>           The permissions of the new file, in octal. (default: 0600, owner only)
          --chunk-size <n>        How many records one transaction handles. (default: 1000)
          --since <token>         Export only the changes committed after this history token (as an export's
                                  header, 'kvtool history' or 'kvtool info' gives it), with delete lines for
                                  the models deleted since.
          --version               Show the version.
          -h, --help              Show help information.

        The export is JSON Lines, one object per line, each with a "kind". The first line is the header:
        {"kvtool-export":2, "kind":"header", "format":1, "created":"...", "schema":{...}, "entities":[...]},
        with the store's catalog (every entity's entry, as the catalog holds it, and the schema version),
        from which 'import' creates the schema in an empty store. Then each record, entities in name order
        and records in ID order: {"kind":"record", "entity":"Task", "id":"...", "record":{...}}. The last
        line counts what the export holds, and names the fields every exported record has: {"kind":"end",
        "records":6, "chunks":0, "entities":{"Task":{"records":4, "chunks":0, "required":[...]}}} (written
        without the spaces, as every line is).

        A field whose value has the kind the catalog gives is plain JSON: numbers, strings, Booleans, dates
        as ISO 8601 in UTC exact to the bit, UUIDs as strings, data as Base64. A field whose value has
        another kind is tagged, as an object with one member named after its kind: {"$string":"..."},
        {"$int":3}, {"$bool":true}. Values inside arrays and objects are plain JSON where that reads back
        unchanged (null, Booleans, strings, integers, numbers with '.' or an exponent, arrays, objects) and
        tagged otherwise: {"$uuid":"..."}, {"$uint":7}, {"$float":0.5}, {"$date":"..."}, {"$data":"..."},
        {"$decimal":"..."}, {"$url":"..."}, {"$stringMap":{...}}, {"$intMap":{"1":...}}, {"$object":{...}}
        and {"$double":"nan"}.

        External values travel inline: a record whose external field holds a value (its descriptor
        {"id":{"$uuid":"..."},"size":...,"chunkSize":...}) is followed by a line per chunk of it, in the
        order of the record's fields, chunk by chunk: {"kind":"chunk", "entity":"Photo", "id":"...",
        "field":"image", "index":0, "data":"<Base64>"}. One chunk is in memory at a time, so values may be
        larger than memory.

        Records are read a chunk per short read transaction, with the chunks of their external values in the
        same transaction, so a live store is not held back and each record is written as one consistent
        state; records written meanwhile may or may not be included. A record whose external values exceed 8
        MiB is read in a transaction of its own, open while its chunks are written out.

        A record table is damaged when it holds a key that is not a record key (a 16-byte ID), which is
        skipped, or when the entries read differ from the table's own count of them (compared when no
        program committed during the walk). The export then writes every record it can read but not the end
        line, so 'import' refuses it (with --output, no file is left), reports the damage and exits with 1.
        A record that does not decode stops the export.

        History: when the store's change history is on, the header records the store's last history token,
        read before the first record: "through":"<store ID>:<position>". A copy made from the export holds
        the store's changes through it (records committed during the export may be in it too, and come
        again), and goes on with --since.

        --since <token> writes an incremental export (format version 3): the changes committed after the
        token, all read in one read transaction, held open while the lines are written, with the history's
        last token, which the header records as "through" beside "since". Each model a commit changed since
        (delete rules' cascades and nullifications included) is written once, as it is now: a record line
        with its chunk lines when it exists, and when it was deleted a delete line, {"kind":"delete",
        "entity":"Task", "id":"..."}. Delete lines come first, then the models that existed at the token,
        then those inserted since. The end line also counts the deletes ("deletes":2, in total and per
        entity) and lists the entities that have lines. With entities named, only their changes are written,
        but the token still covers the whole store. 'kvtool import' applies it to a copy: records replace
        the stored ones, delete lines delete theirs. Without --output, the token the export goes through is
        also printed to standard error, to pass to the next --since. A store without history, a token of
        another store, a token after which entries were pruned, one past the last commit and a damaged
        history entry are errors (exit status 1): export in full into a new copy instead.

        The file is written under a temporary name beside it, flushed to disk and renamed into place only
        once complete, so a failure (a full disk, say) never leaves part of it. An existing file is replaced
        only with --force, and only a regular file of your own: never a symbolic link, a FIFO, a device, a
        directory or another user's file. The new file's mode is 0600 (owner only) unless --mode gives
        another.

        """

    static let historyHelp = """
        OVERVIEW: List the store's change history: what each commit changed.

        USAGE: kvtool history <path> [--since <token>] [--entity <name> ...] [--author <name>] [--limit <n>]
                              [--json]

        ARGUMENTS:
          <path>                  The store's directory (the one that holds data.mdb).

        OPTIONS:
          --since <token>         List the entries after this token (as 'history' or an export's header
                                  gives it); from the oldest entry kept by default.
          --entity <name>         Only entries that changed a model of this entity; repeatable.
          --author <name>         Only the entries of commits by this author.
          --limit <n>             List at most n entries.
          --json                  Print JSON Lines, an entry per line, instead of text for people.
          --version               Show the version.
          -h, --help              Show help information.

        A store whose history a program switched on (ModelContainer.enableHistory(retention:)) records an
        entry for every commit that changed models, in the commit's transaction, by every writer ('kvtool
        import' included): its token (<store ID>:<position>, one more for each commit), its time (by the
        clock of the process that committed, in ISO 8601), its author, and each model it inserted, updated
        or deleted, with the models a delete rule reached: 'cascaded' (deleted by a cascade from the model
        named) and 'nullified' (a reference to the deleted model removed). A deleted model's line shows the
        values its entity keeps on deletion, as 'export' writes records. The store keeps what its retention
        says; the last line tells the store's last token, which 'kvtool export --since' takes.

        Entries come oldest first, after --since (a token 'history' or an export's header gave), or from the
        oldest one kept. --entity, --author and --limit choose among them: an entry that changed a model of
        one of the entities is listed whole. The entries are read in one read transaction and held in
        memory, so --limit bounds both.

        A token of another store's history (or of a history switched off since), one after which entries
        were pruned, one past the last commit (a store restored from an older copy), and a damaged entry are
        errors, exit status 1; a store without history is one too.

        """

    static let replicatePublishHelp = """
        OVERVIEW: Publish the store's change history to a stream, for replicas.

        USAGE: kvtool replicate-publish <path> --server <url> ... --stream <name>
                                        [--connect-timeout <seconds>] [--subject <subject>]
                                        [--create-stream] [--replicas <n>] [--once]

        ARGUMENTS:
          <path>                  The store's directory (the one that holds data.mdb).

        OPTIONS:
          --server <url>          A NATS server, as nats://host:port (nats://user:password@host:port with
                                  credentials), host:port or host; repeat for the servers of a cluster.
          --stream <name>         The JetStream stream the primary's history goes to.
          --connect-timeout <seconds>
                                  How long to try the servers, round after round, before giving up on the
                                  first connection. (default: 10)
          --subject <subject>     The subject the stream captures and the messages go to. (default:
                                  kvstore.history.<stream>)
          --create-stream         Create the stream if it does not exist.
          --replicas <n>          The stream's copies in the cluster, for --create-stream: 1, or 3 on a
                                  cluster of three or more. (default: 1)
          --once                  Publish what the stream lacks, then exit.
          --version               Show the version.
          -h, --help              Show help information.

        The store is a primary whose history is on (ModelContainer.enableHistory(retention:)). Its commits
        go to the JetStream stream in groups, each message naming the previous one, so the stream holds the
        history in order and once: the publisher finds the stream's last commit when it starts and goes on
        after it, from the store's history, so it may be stopped and started again at any time, and programs
        go on committing meanwhile. The store is opened through the library (with a lock file, which it
        creates only when run as the store's owner); the publisher writes one catalog entry, which marks the
        store as the stream's primary so that it is never made a replica, and otherwise only reads.

        With --once, it publishes what the stream lacks and exits, printing how many messages it published
        and the token of the last commit the stream holds. Without it, it publishes each commit soon after
        it is made, printing its progress on standard error, until SIGINT (Ctrl-C) or SIGTERM, then stops
        cleanly and exits with 0. Failures of the servers are retried; a stream that holds commits the store
        does not have (a primary restored from an older copy, or two primaries on one stream), a history
        pruned before it was published, and a record larger than the stream's largest message stop it with
        exit status 1.

        The stream must exist, unless --create-stream is given: it is then created, if missing, with file
        storage, --replicas copies in the cluster, no limits, and the subject. A replica starts as a copy of
        this store ('kvtool copy'), followed with 'kvtool replicate-follow'.

        """

    @Test func mainHelpIsPinned() {
        for arguments in [[], ["--help"], ["-h"], ["help"]] {
            #expect(kvtool(arguments: arguments) == RunResult(status: 0, output: Self.mainHelp, errors: ""))
        }
    }

    @Test func subcommandHelpIsPinned() {
        #expect(kvtool("help", "count") == RunResult(status: 0, output: Self.countHelp, errors: ""))
        #expect(kvtool("count", "--help") == RunResult(status: 0, output: Self.countHelp, errors: ""))
        #expect(kvtool("count", "/no/such/store", "Task", "--frobnicate", "-h").output == Self.countHelp)
    }

    @Test func importAndExportHelpIsPinned() {
        #expect(kvtool("help", "import") == RunResult(status: 0, output: Self.importHelp, errors: ""))
        #expect(kvtool("help", "export") == RunResult(status: 0, output: Self.exportHelp, errors: ""))
    }

    @Test func historyHelpIsPinned() {
        #expect(kvtool("help", "history") == RunResult(status: 0, output: Self.historyHelp, errors: ""))
        #expect(kvtool("history", "--help") == RunResult(status: 0, output: Self.historyHelp, errors: ""))
    }

    @Test func replicatePublishHelpIsPinned() {
        #expect(
            kvtool("help", "replicate-publish") == RunResult(status: 0, output: Self.replicatePublishHelp, errors: ""))
    }

    @Test(arguments: KVTool.commandNames)
    func everySubcommandHasHelpAndVersion(_ name: String) {
        let help = kvtool("help", name)
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("OVERVIEW: "))
        #expect(help.output.contains("USAGE: kvtool \(name)"))
        #expect(help.output.contains("  -h, --help              Show help information.\n"))
        #expect(kvtool(name, "--help") == help)
        #expect(kvtool(name, "-h") == help)
        #expect(
            kvtool(name, "--version") == RunResult(status: 0, output: "kvtool 0.1.0 (KVStore format 4)\n", errors: ""))
        for line in help.output.split(separator: "\n") {
            #expect(line.count <= 100, "\(name): \(line)")
        }
    }

    @Test func everySubcommandsDeclarationsAreSound() {
        for signature in KVTool.tool.signatures {
            #expect(signature.problems == [], "\(signature.configuration.name)")
        }
    }

    @Test func versionIsPinned() {
        #expect(kvtool("--version") == RunResult(status: 0, output: "kvtool 0.1.0 (KVStore format 4)\n", errors: ""))
    }

    @Test func helpOfAnUnknownSubcommandIsAUsageError() {
        let result = kvtool("help", "nope")
        #expect(result.status == 64)
        #expect(
            result.errors == """
                Error: Unknown subcommand 'nope'
                Usage: kvtool help [<subcommand>]
                  See 'kvtool help help' for more information.

                """)
    }
}
