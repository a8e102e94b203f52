/// The problems of a check, listed up to a limit and counted beyond it.
struct ProblemList {
    private(set) var listed: [PageCheck.Problem] = []
    private(set) var omitted = 0
    private(set) var omitsDamage = false
    private(set) var damagedPages: [Int: PageCheck.Owner] = [:]
    /// The number of damage problems, listed or not.
    private(set) var damageCount = 0
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    mutating func add(_ problem: PageCheck.Problem) {
        if problem.severity == .damage {
            damageCount += 1
            if let page = problem.page, damagedPages[page] == nil { damagedPages[page] = problem.owner }
        }
        if listed.count < limit {
            listed.append(problem)
        } else {
            omitted += 1
            if problem.severity == .damage { omitsDamage = true }
        }
    }

    /// Adds the problems of `other` after these, as if each had been added here: those it listed one by one, and
    /// those it only counted as counted.
    mutating func add(_ other: ProblemList) {
        for problem in other.listed { add(problem) }
        omitted += other.omitted
        if other.omitsDamage { omitsDamage = true }
        damageCount += other.damageCount - other.listed.filter { $0.severity == .damage }.count
        for (page, owner) in other.damagedPages where damagedPages[page] == nil { damagedPages[page] = owner }
    }
}
