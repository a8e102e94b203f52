/// The dataset sizes of each scenario, for each ``SizeClass``.
struct ScenarioSizes: Codable, Sendable {
    /// The tasks of one write transaction in chunked inserts and when filling stores.
    var chunkSize = 10_000
    /// The tasks the chunked insert inserts.
    var insertCount: Int
    /// The tasks the naive insert inserts, one transaction each.
    var naiveInsertCount: Int
    /// The projects of the store the read, update and delete scenarios use; each has ten tasks.
    var projectCount: Int
    /// The IDs of a fetch batch.
    var fetchCount: Int
    /// The fetch batches of a run, each a different sample of IDs; the N+1 variant fetches the same IDs.
    var fetchBatches: Int
    /// The projects whose tasks a prefetch batch reads.
    var prefetchProjects: Int
    /// The prefetch batches of a run, each a different sample of projects.
    var prefetchBatches: Int
    /// The queries of the indexed query run.
    var indexedQueries: Int
    /// The queries of the full-scan query run; each decodes every task.
    var fullScanQueries: Int
    /// The orders of the query-power scenario's store, a hundred per customer.
    var queryPowerOrderCount: Int
    /// The compound-range queries of a run of the query-power scenario; its OR and count runs ask a tenth and a
    /// fortieth as many.
    var queryPowerQueries: Int
    /// The queries of a run of the query-power scenario's scan rows, each of which decodes every order.
    var queryPowerScanQueries: Int
    /// The tasks the update changes; every tenth moves to another project.
    var updateCount: Int
    /// The projects the cascade delete deletes, with their tasks.
    var cascadeProjects: Int
    /// The store sizes of the scale series.
    var scalePoints: [Int]
    /// The projects of the store the class/struct comparison reads, updates and deletes from; each has ten tasks.
    /// Smaller than the other scenarios' store, to keep the comparison's share of a run small.
    var modelKindProjectCount: Int
    /// The tasks the class/struct comparison's insert inserts, into a store that holds their projects.
    var modelKindInsertCount: Int
    /// The fetches of a due-date window, of about ten tasks each, of a run of the class/struct comparison's indexed
    /// fetch, all through one context.
    var modelKindWindowFetches: Int

    /// The tasks in the store of the read, update and delete scenarios.
    var taskCount: Int {
        projectCount * Dataset.tasksPerProject
    }

    /// The tasks in the store of the class/struct comparison.
    var modelKindTaskCount: Int {
        modelKindProjectCount * Dataset.tasksPerProject
    }

    /// The sizes for `size`.
    init(_ size: SizeClass) {
        switch size {
        case .small:
            insertCount = 10_000
            naiveInsertCount = 1_000
            projectCount = 1_000
            fetchCount = 1_000
            fetchBatches = 2
            prefetchProjects = 100
            prefetchBatches = 2
            indexedQueries = 100
            fullScanQueries = 3
            queryPowerOrderCount = 10_000
            queryPowerQueries = 200
            queryPowerScanQueries = 1
            updateCount = 1_000
            cascadeProjects = 50
            scalePoints = [1_000, 10_000]
            modelKindProjectCount = 200
            modelKindInsertCount = 2_000
            modelKindWindowFetches = 20
        case .standard:
            insertCount = 100_000
            naiveInsertCount = 10_000
            projectCount = 10_000
            fetchCount = 10_000
            fetchBatches = 10
            prefetchProjects = 1_000
            prefetchBatches = 10
            indexedQueries = 5_000
            fullScanQueries = 10
            queryPowerOrderCount = 100_000
            queryPowerQueries = 2_000
            queryPowerScanQueries = 3
            updateCount = 10_000
            cascadeProjects = 500
            scalePoints = [10_000, 100_000]
            modelKindProjectCount = 2_000
            modelKindInsertCount = 20_000
            modelKindWindowFetches = 100
        case .large, .huge:
            insertCount = 1_000_000
            naiveInsertCount = 20_000
            projectCount = 100_000
            fetchCount = 10_000
            fetchBatches = 10
            prefetchProjects = 1_000
            prefetchBatches = 10
            indexedQueries = 5_000
            fullScanQueries = 3
            queryPowerOrderCount = 1_000_000
            queryPowerQueries = 2_000
            queryPowerScanQueries = 1
            updateCount = 10_000
            cascadeProjects = 500
            scalePoints = size == .huge ? [10_000, 100_000, 1_000_000, 10_000_000] : [10_000, 100_000, 1_000_000]
            modelKindProjectCount = 10_000
            modelKindInsertCount = 100_000
            modelKindWindowFetches = 100
        }
    }
}
