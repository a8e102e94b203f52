import Foundation
import Testing

@testable import kvbench

/// The scale series' generator computes a project's ID from its position instead of keeping every project's ID, so that
/// its process holds one chunk at ten million tasks; the IDs must be those the factory makes.
@Suite struct KVBenchGeneratorTests {
    @Test(arguments: IDOrder.allCases)
    func aProjectIDComputedFromItsPositionIsTheOneTheFactoryMade(order: IDOrder) {
        var factory = RecordFactory(order: order, seed: 42)
        // Past two milliseconds' worth of IDs, whose counters wrap.
        let made = (0..<2_500).map { _ in factory.makeProject().id }
        #expect((0..<2_500).map { factory.projectID(at: $0) } == made)
        #expect(made == made.sorted { $0.uuidString < $1.uuidString })
    }
}
