import KVStore
import LMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A store opened from its path alone, without the program's model types, with its catalog read: the format, and
/// each entity's fields, indexes and relationships.
///
/// This is how `kvtool` and the integrity check (``StoreInspection``) open a store. Stores are opened read-only
/// unless the caller writes (`kvtool import`). The catalog is read once, at open, in one read transaction: callers
/// work from that snapshot.
///
/// ```swift
/// let store = try InspectedStore.open("/var/lib/app/store")
/// defer { store.close() }
/// let task = try store.entity(named: "Task")
/// ```
package final class InspectedStore {
    /// The store's directory, as given.
    package let path: String
    /// The data file and its header.
    package let dataFile: DataFile
    /// The LMDB environment.
    package let environment: Environment
    /// The catalog table.
    package let catalog: Table
    /// The `format` entry of the catalog.
    package let format: StoreFormat
    /// The `schema` entry of the catalog: the schema version, the migration under way, the migrations applied. Empty
    /// when the store never recorded one, or when the entry does not decode (it is then among ``damagedEntries``).
    package let schema: SchemaState
    /// The entities whose catalog entries decode, in name order.
    package let entities: [EntityCatalog]
    /// The catalog entries that do not decode, by catalog key, with the reason.
    package let damagedEntries: [(key: String, reason: String)]
    /// The page check made before the store was read: its meta pages and table roots, or every page for `check`.
    package let pages: PageCheck.Report
    private let closesEnvironment: Bool

    private init(
        path: String, dataFile: DataFile, environment: Environment, closesEnvironment: Bool, catalog: Table,
        pages: PageCheck.Report
    ) throws {
        self.pages = pages
        self.path = path
        self.dataFile = dataFile
        self.environment = environment
        self.closesEnvironment = closesEnvironment
        self.catalog = catalog
        let (format, schema, entities, damaged) = try environment.read { txn in
            let format = try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: catalog)
            var (entities, damaged) = try Self.readEntities(in: txn, catalog: catalog)
            var schema = SchemaState()
            do {
                schema = try Catalog.schemaState(in: txn, table: catalog)
            } catch {
                damaged.append((String(decoding: Catalog.schemaKey, as: UTF8.self), String(describing: error)))
            }
            return (format, schema, entities, damaged)
        }
        guard let format else {
            throw InspectionError(.notAStore, "'\(path)' is not a KVStore store: its catalog has no format entry")
        }
        guard format.formatVersion <= Catalog.formatVersion else {
            throw InspectionError(
                .newerFormat,
                "'\(path)' was written by KVStore format \(format.formatVersion); kvtool reads format "
                    + "\(Catalog.formatVersion) and older. Use a newer kvtool")
        }
        self.format = format
        self.schema = schema
        self.entities = entities
        self.damagedEntries = damaged
    }

    /// Opens the store at `path`.
    ///
    /// Read-only opens create and write nothing in the store's directory but the reader slot LMDB takes in an
    /// existing `lock.mdb`. A store without a lock file has no process using it, and is read without one (LMDB's
    /// `noLock`), so that none is created: not by another user (root, say), whose lock file would lock the store's
    /// owner out, nor by the owner. A writable open of such a store creates the lock file, and is refused unless
    /// kvtool runs as the store's owner. A `data.mdb` or `lock.mdb` that is not a regular file is refused (see
    /// ``DataFile`` and ``LockFile``).
    ///
    /// Before LMDB reads anything but the meta pages, the library's bounds-checked page parser reads the snapshot the
    /// open will see: by default the meta pages and every table's root, with `pages: .full` every page. A damaged meta
    /// page, main table or catalog table makes the store unreadable; damage in other tables is in ``pages`` for
    /// the integrity check to report when `pages` is `.full`, and refused otherwise, since the caller would read
    /// through it.
    ///
    /// - Parameters:
    ///   - path: The store's directory.
    ///   - writable: Whether to open for writing; otherwise the store is opened read-only.
    ///   - pages: How much of the file to check before reading it.
    /// - Throws: ``InspectionError``: ``InspectionError/unreadable`` when the store cannot be read safely,
    ///   ``InspectionError/notAStore`` when the path is not a store (missing, a file, no `data.mdb`, not LMDB, no
    ///   catalog), ``InspectionError/refused`` for a planted `lock.mdb` or `data.mdb`, a lock file its owner could not
    ///   open or a permission denied, ``InspectionError/newerFormat`` for a store of a newer format,
    ///   ``InspectionError/systemError`` when the files cannot be looked at or LMDB fails to open them.
    package static func open(
        _ path: String, writable: Bool = false, pages: PageCheck.Scope = .roots
    ) throws -> InspectedStore {
        let dataFile = try DataFile(directory: path)
        var options: Environment.Options = writable ? [] : [.readOnly]
        // Right before the open, since LMDB opens the lock file by name.
        if try LockFile.check(in: path) == .absent {
            if !writable {
                options.insert(.noLock)
            } else if geteuid() != dataFile.owner {
                let owner = User.name(of: dataFile.owner) ?? "<owner>"
                throw InspectionError(
                    .refused,
                    "'\(path)' belongs to \(User.describe(dataFile.owner)) and has no lock file: writing it as "
                        + "\(User.describe(geteuid())) would create a lock.mdb that its owner cannot open. Run "
                        + "kvtool as its owner (for example 'runuser -u \(owner) -- kvtool ...')")
            }
        }
        // The map size in the meta page is not trusted (damage can make it anything): LMDB maps at least the data
        // the meta page says is used, whatever is asked.
        let configuration = Environment.Configuration(mapSize: 1 << 20, maxTables: 4096, options: options)
        let environment: Environment
        do {
            environment = try Environment.open(path: path, configuration: configuration)
        } catch LMDBError.invalid {
            throw InspectionError(.notAStore, "'\(path)' is not a store: its data.mdb is not an LMDB data file")
        } catch let error as LMDBError where error == .corrupted && error.detail != nil {
            // The binding refuses meta pages that LMDB would trust and then crash on, and a data file cut short.
            throw InspectionError(
                .unreadable,
                "The store at '\(path)' is damaged where it must be read: \(error.detail ?? ""). Restore it from a "
                    + "backup")
        } catch LMDBError.accessDenied where geteuid() != dataFile.owner {
            throw InspectionError(
                .refused,
                "Cannot open the store at '\(path)': permission denied (EACCES). It belongs to "
                    + "\(User.describe(dataFile.owner)) and kvtool runs as \(User.describe(geteuid())); reading it "
                    + "takes write access to its lock.mdb. Run kvtool as its owner")
        } catch {
            throw InspectionError(.systemError, "Cannot open the store at '\(path)': \(error)")
        }
        // The process-wide registry hands out an environment the process already has open (a program's container,
        // or a test's) whatever configuration is asked for; kvtool closes only one it opened itself.
        let closes = environment.configuration == configuration
        do {
            let report = try environment.checkPages(scope: pages)
            try Self.refuseUnsafe(report, path: path, reportsDamage: pages == .full)
            let catalog: Table
            do {
                catalog = try environment.openTable(named: Catalog.tableName)
            } catch LMDBError.notFound {
                throw InspectionError(
                    .notAStore, "'\(path)' is not a KVStore store: it is \(try Self.describeForeign(environment))")
            }
            return try InspectedStore(
                path: path, dataFile: dataFile, environment: environment, closesEnvironment: closes,
                catalog: catalog, pages: report)
        } catch {
            if closes { try? environment.close() }
            throw error
        }
    }

    /// Throws when a page check found damage that reading the store would go through: the meta pages, the main table
    /// or the catalog always; any table when the caller does not report damage itself.
    private static func refuseUnsafe(_ report: PageCheck.Report, path: String, reportsDamage: Bool) throws {
        // A wrong map size in a meta page is damage to report, but harmless to read: LMDB maps what the data needs.
        let damage = report.problems.filter { $0.severity == .damage && $0.kind != .mapSize }
        let blocking = damage.filter { problem in
            switch problem.owner {
            case .meta, .main: true
            case .table(let name): name == Catalog.tableName || !reportsDamage
            case .freeList: !reportsDamage
            }
        }
        guard !blocking.isEmpty else { return }
        // Each problem's message is a sentence of its own.
        let shown = blocking.prefix(3).map(\.description).joined(separator: " ")
        let more = blocking.count > 3 ? " And \(blocking.count - 3) more." : ""
        // The integrity check (which reports damage itself) needs no advice to run it.
        let advice =
            reportsDamage
            ? "Nothing else of it can be checked; restore the store from a backup"
            : "Run 'kvtool check \(path)' for the whole report, and restore the store from a backup"
        throw InspectionError(
            .unreadable, "The store at '\(path)' is damaged where it must be read: \(shown)\(more) \(advice)",
            pageDamage: blocking)
    }

    /// The tables with damaged pages, which the integrity check reports and does not read through LMDB. The damaged
    /// pages count too: they are kept beyond the report's limit on problems.
    package var damagedTables: Set<String> {
        let listed = pages.problems.filter { $0.severity == .damage && $0.kind != .mapSize }
        return Set(listed.compactMap(\.owner.tableName) + pages.damagedPages.values.compactMap(\.tableName))
    }

    /// Whether the store is read without a lock file, which only holds while no program opens it meanwhile.
    package var readsWithoutLockFile: Bool {
        environment.configuration.options.contains(.noLock)
    }

    /// Checks, after the store was read without a lock file, that no program opened the store meanwhile: a program
    /// that writes does not know about the reads then, and may have reused pages they read.
    ///
    /// - Throws: ``InspectionError/changedWhileRead`` when a lock file appeared.
    package func checkNoProgramOpenedIt() throws(InspectionError) {
        guard readsWithoutLockFile else { return }
        if case .failure(let failure) = FileKind.status(of: path + "/lock.mdb"), failure.code == ENOENT { return }
        throw InspectionError(
            .changedWhileRead,
            "A program opened '\(path)' while kvtool read it without a lock file; what kvtool read may mix two "
                + "states of the store. Run the command again")
    }

    /// An LMDB environment that has no catalog table, for the message: the tables it has.
    private static func describeForeign(_ environment: Environment) throws -> String {
        let names = try tableNames(in: environment).map { name in
            String(name.map { $0.isASCII && ($0.asciiValue ?? 0) < 0x20 ? "?" : $0 })
        }
        guard !names.isEmpty else { return "an LMDB environment with no tables and no KVStore catalog" }
        let shown = names.prefix(10).joined(separator: ", ")
        let more = names.count > 10 ? " and \(names.count - 10) more" : ""
        return
            "an LMDB environment with \(names.count == 1 ? "table" : "tables") \(shown)\(more) but no KVStore catalog"
    }

    /// Closes the environment, unless the process had it open before.
    package func close() {
        if closesEnvironment { try? environment.close() }
    }

    /// Reads every entity entry of the catalog, keeping apart those that do not decode.
    ///
    /// - Throws: What LMDB throws.
    package static func readEntities(
        in txn: borrowing Transaction, catalog: Table
    ) throws -> (entities: [EntityCatalog], damaged: [(key: String, reason: String)]) {
        var keys: [[UInt8]] = []
        try txn.scan(catalog, in: .prefix(Catalog.entityKeyPrefix)) { key, _ in
            keys.append(Array(key))
            return true
        }
        var entities: [EntityCatalog] = []
        var damaged: [(key: String, reason: String)] = []
        for key in keys {
            do {
                guard let entity = try Catalog.read(EntityCatalog.self, key: key, in: txn, table: catalog) else {
                    continue
                }
                guard key.elementsEqual(Catalog.entityKey(entity.name)) else {
                    damaged.append(
                        (String(decoding: key, as: UTF8.self), "the entry names the entity '\(entity.name)'"))
                    continue
                }
                entities.append(entity)
            } catch {
                damaged.append((String(decoding: key, as: UTF8.self), String(describing: error)))
            }
        }
        return (entities.sorted { $0.name < $1.name }, damaged)
    }

    /// The entity with this name.
    ///
    /// - Throws: ``InspectionError/notFound`` when the catalog has no such entity, naming those it has;
    ///   ``InspectionError/damaged`` when its catalog entry does not decode.
    package func entity(named name: String) throws(InspectionError) -> EntityCatalog {
        if let entity = entities.first(where: { $0.name == name }) { return entity }
        if damagedEntries.contains(where: { $0.key == String(decoding: Catalog.entityKey(name), as: UTF8.self) }) {
            throw InspectionError(.damaged, "The catalog entry of \(name) does not decode; run 'kvtool check \(path)'")
        }
        let known = entities.isEmpty ? "it has none" : "it has " + entities.map(\.name).joined(separator: ", ")
        throw InspectionError(.notFound, "Unknown entity '\(name)': the store's catalog has no such entity (\(known))")
    }

    /// The record table of an entity.
    ///
    /// - Throws: ``InspectionError/damaged`` when the table is missing; what LMDB throws.
    package func recordTable(of entity: EntityCatalog) throws -> Table {
        try table(Catalog.recordTableName(entity.name), options: [], what: "record table of \(entity.name)")
    }

    /// The table of one of an entity's indexes, opened with the options its uniqueness implies.
    ///
    /// - Throws: ``InspectionError/damaged`` when the table is missing or has other options; what LMDB throws.
    package func indexTable(of entity: EntityCatalog, _ index: IndexCatalog) throws -> Table {
        try table(
            Catalog.indexTableName(entity.name, index.name), options: Catalog.indexTableOptions(unique: index.isUnique),
            what: "table of the index \(entity.name).\(index.name)")
    }

    private func table(_ name: String, options: Table.Options, what: String) throws -> Table {
        do {
            return try environment.openTable(named: name, options: options)
        } catch LMDBError.notFound {
            throw InspectionError(.damaged, "The \(what) ('\(name)') is missing; run 'kvtool check \(path)'")
        } catch LMDBError.incompatible {
            throw InspectionError(
                .damaged, "The \(what) ('\(name)') has the wrong table flags; run 'kvtool check \(path)'")
        }
    }

    /// Opens any table of the store whatever options it was created with, for statistics.
    ///
    /// - Throws: What LMDB throws when the table does not exist.
    package func anyTable(named name: String) throws -> Table {
        let candidates: [Table.Options] = [
            [], [.dupSort, .dupFixed], [.dupSort], [.integerKey], [.dupSort, .integerDup],
        ]
        for options in candidates {
            do {
                return try environment.openTable(named: name, options: options)
            } catch LMDBError.incompatible {
                continue
            }
        }
        return try environment.openTable(named: name, options: [.reverseKey])
    }

    /// The names of every table of the store, in key order.
    ///
    /// - Throws: What LMDB throws.
    package func tableNames() throws -> [String] {
        try Self.tableNames(in: environment)
    }

    /// The names of every table of an environment, in key order: the keys of its main table.
    ///
    /// - Throws: What LMDB throws.
    package static func tableNames(in environment: Environment) throws -> [String] {
        let main = try environment.openTable(named: nil)
        return try environment.read { txn in
            var names: [String] = []
            try txn.scan(main) { key, _ in
                names.append(String(decoding: key, as: UTF8.self))
                return true
            }
            return names
        }
    }
}
