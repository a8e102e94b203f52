import Foundation
import LMDB

/// How many entries a plan reads, counted in the store when the plan is chosen.
struct RowEstimate: Equatable {
    /// The entries counted.
    var rows: Int
    /// Whether the count stopped at its cap: the plan reads at least ``rows``.
    var isAtLeast = false
}

// Choosing among the plans a predicate allows by counting in the store, in the transaction that runs the query:
// nothing is kept, so statistics cost writes nothing and never go stale. Keys are counted exactly (a key's count of
// duplicates is one call); a range is walked up to a cap, the entries of the cheapest plan so far, since a range that
// holds more cannot be cheaper. Only a predicate with two or more usable plans, or a `!=` that only a count can judge,
// is counted at all.
extension EntityStore {
    /// The plan of `descriptor` for this transaction: ``plan(_:)``'s, or, when the predicate allows several plans,
    /// the one the store's counts find cheapest, and an intersection of two when reading both ID lists costs less
    /// than reading the first's records; a scan becomes the complement of a `!=` when the excluded key holds at least
    /// half of its index.
    ///
    /// - Throws: What LMDB throws while counting.
    func plan(_ descriptor: FetchDescriptor<M>, in txn: borrowing Transaction) throws -> PlannedQuery {
        try refined(plan(descriptor), descriptor: descriptor, in: txn)
    }

    /// `planned`, the plan of `descriptor`, refined by the store's counts (see ``plan(_:in:)``).
    ///
    /// - Throws: What LMDB throws while counting.
    func refined(
        _ planned: PlannedQuery, descriptor: FetchDescriptor<M>, in txn: borrowing Transaction
    ) throws -> PlannedQuery {
        // An exact plan reads the matches and nothing else, which every other plan reads too: nothing to count.
        guard planned.mayCount, !planned.isExact, let predicate = descriptor.predicate else { return planned }
        // The planner's candidates when it kept them; a template's plan walks the predicate again.
        var walked: [QueryPlanner.KeyPathTerm]?
        func terms() -> [QueryPlanner.KeyPathTerm] {
            if let walked { return walked }
            let terms = QueryPlanner.terms(of: predicate.expression, indexes: plannerIndexes)
            walked = terms
            return terms
        }
        let candidates = planned.candidates ?? QueryPlanner.allCandidates(for: terms(), indexes: plannerIndexes)
        // A scan, or a complement the counts say is worth reading.
        if case .scan = planned.plan {
            for candidate in candidates {
                guard let excluded = candidate.excludedKey, case .union(let parts) = candidate.plan,
                    case .range(let name, _, _, _) = parts.first
                else { continue }
                let index = try storedIndex(name)
                let total = try txn.count(of: index.table)
                let held = try IndexCandidates.count(
                    underKey: IndexKey.finalized(excluded, hash: longKeyHash), in: index.table,
                    isUnique: index.description.isUnique, txn: txn)
                guard held * 2 >= total, total > 0 else { continue }
                return replanned(planned, with: candidate, descriptor: descriptor, terms: terms())
            }
            return planned
        }
        // Reads of keys and ranges of different indexes, each counted up to the cheapest so far.
        let readable = candidates.filter { candidate in
            guard candidate.excludedKey == nil else { return false }
            switch candidate.plan {
            case .keys(QueryPlan.recordKey, _): return false
            case .keys, .range: return true
            case .scan, .ordered, .union, .intersection: return false
            }
        }
        // A read of IDs or of one unique key is as cheap as it gets; so is any plan of fewer than
        // `intersectionMinimum` entries, which the counting would cost as much as it could save.
        guard readable.count > 1, let chosen = readable.first, chosen.plan == planned.plan, chosen.tier < 4,
            !(candidates.first?.readsRecordKeys ?? false)
        else { return planned }
        let chosenEstimate = try estimate(chosen.plan, in: txn)
        guard chosenEstimate.rows >= Self.intersectionMinimum else { return planned }
        var counted: [(candidate: QueryPlanner.Candidate, estimate: RowEstimate)] = [(chosen, chosenEstimate)]
        var cheapest = chosenEstimate.rows
        for candidate in readable.dropFirst().prefix(3) {
            let cap = cheapest * Self.intersectionRatio + Self.intersectionMinimum
            let estimate = try self.estimate(candidate.plan, cap: cap, in: txn)
            counted.append((candidate, estimate))
            cheapest = min(cheapest, estimate.rows)
        }
        // The cheapest first; ties keep the planner's order.
        let ranked = counted.enumerated().sorted { left, right in
            (left.element.estimate.rows, left.offset) < (right.element.estimate.rows, right.offset)
        }.map(\.element)
        guard let first = ranked.first else { return planned }
        let name = first.candidate.plan.indexName
        if first.estimate.rows >= Self.intersectionMinimum,
            let second = ranked.dropFirst().first(where: {
                $0.candidate.plan.indexName != name && !$0.estimate.isAtLeast
                    && $0.estimate.rows <= first.estimate.rows * Self.intersectionRatio
            })
        {
            let plan = QueryPlan.intersection([first.candidate.plan, second.candidate.plan])
            let intersection = QueryPlanner.Candidate(plan: plan, isUnique: false, attributeCount: 1)
            return replanned(planned, with: intersection, descriptor: descriptor, terms: terms())
        }
        guard first.candidate.plan != planned.plan else { return planned }
        return replanned(planned, with: first.candidate, descriptor: descriptor, terms: terms())
    }

    /// How many times more entries a second ID list may hold than the first for an intersection to pay: reading an
    /// ID from an index costs about a tenth of reading and decoding a record.
    static var intersectionRatio: Int { 8 }

    /// The fewest candidates worth an intersection.
    static var intersectionMinimum: Int { 64 }

    /// `planned` with `candidate`'s plan, its order and exactness worked out again.
    private func replanned(
        _ planned: PlannedQuery, with candidate: QueryPlanner.Candidate, descriptor: FetchDescriptor<M>,
        terms: [QueryPlanner.KeyPathTerm]
    ) -> PlannedQuery {
        let plan = QueryPlanner.oriented(
            candidate.plan, sortBy: descriptor.sortBy, indexes: plannerIndexes,
            fixedAttributes: candidate.fixedAttributes)
        return PlannedQuery(
            plan: plan,
            isSorted: QueryPlanner.isSorted(
                plan, sortBy: descriptor.sortBy, indexes: plannerIndexes, fixedAttributes: candidate.fixedAttributes),
            uniqueIndexes: QueryPlanner.uniqueIndexes(of: plan, in: plannerIndexes),
            isExact: QueryPlanner.isExact(plan, predicate: descriptor.predicate, terms: terms, indexes: plannerIndexes))
    }

    /// The entries `plan` reads, counted: exactly for keys (their counts of duplicates) and scans (the table's
    /// count), by walking for a range, stopping at `cap`.
    ///
    /// - Throws: What LMDB throws.
    func estimate(_ plan: QueryPlan, cap: Int = .max, in txn: borrowing Transaction) throws -> RowEstimate {
        switch plan {
        case .scan:
            return RowEstimate(rows: try txn.count(of: records))
        case .keys(QueryPlan.recordKey, let keys):
            return RowEstimate(rows: keys.count)
        case .keys(let name, let keys):
            let index = try storedIndex(name)
            var rows = 0
            for key in keys {
                rows += try IndexCandidates.count(
                    underKey: IndexKey.finalized(key, hash: longKeyHash), in: index.table,
                    isUnique: index.description.isUnique, txn: txn)
            }
            return RowEstimate(rows: rows)
        case .range(let name, let lower, let upper, _):
            var rows = 0
            try forEachID(inRange: name, lower: lower, upper: upper, in: txn) { _ in
                rows += 1
                return rows < cap
            }
            return RowEstimate(rows: rows, isAtLeast: rows >= cap)
        case .ordered(let name, _):
            return RowEstimate(rows: try txn.count(of: storedIndex(name).table))
        case .union(let plans):
            var total = RowEstimate(rows: 0)
            for part in plans {
                let estimate = try self.estimate(part, in: txn)
                total.rows += estimate.rows
                total.isAtLeast = total.isAtLeast || estimate.isAtLeast
            }
            return total
        case .intersection(let plans):
            var smallest = RowEstimate(rows: .max)
            for part in plans {
                let estimate = try self.estimate(part, in: txn)
                if estimate.rows < smallest.rows { smallest = estimate }
            }
            return smallest
        }
    }

    /// The plan of `descriptor` as a tree, each step with the entries it reads, counted in this transaction:
    ///
    /// ```text
    /// intersection: ~40 rows
    ///   index account: 1 key: 25 rows
    ///   index category: 1 key: 60 rows
    /// ```
    ///
    /// `~` marks an estimate (an intersection holds at most its smallest part), `>=` a range counted up to a cap.
    ///
    /// - Throws: What LMDB throws.
    func explanation(of descriptor: FetchDescriptor<M>, in txn: borrowing Transaction) throws -> String {
        let planned = try refined(plan(descriptor), descriptor: descriptor, in: txn)
        var lines: [String] = []
        try describe(planned.plan, unique: planned.uniqueIndexes, depth: 0, into: &lines, in: txn)
        if planned.isExact { lines[0] += " (exact)" }
        if !descriptor.sortBy.isEmpty { lines.append(planned.isSorted ? "in index order" : "then sorted") }
        return lines.joined(separator: "\n")
    }

    private func describe(
        _ plan: QueryPlan, unique: [String], depth: Int, into lines: inout [String], in txn: borrowing Transaction
    ) throws {
        let indent = String(repeating: "  ", count: depth)
        let estimate = try self.estimate(plan, in: txn)
        switch plan {
        case .union(let parts), .intersection(let parts):
            let kind = if case .union = plan { "union" } else { "intersection" }
            let rows = if case .union = plan { "\(estimate.rows) rows" } else { "~\(estimate.rows) rows" }
            lines.append("\(indent)\(kind): \(rows)")
            for part in parts { try describe(part, unique: unique, depth: depth + 1, into: &lines, in: txn) }
        default:
            let count = "\(estimate.isAtLeast ? ">=" : "")\(estimate.rows) rows"
            lines.append("\(indent)\(QueryPlanner.describe(plan, uniqueIndexes: unique)): \(count)")
        }
    }
}
