import Foundation
import Testing

/// A few iterations of the built `crashtest`: writers killed at random moments, the store checked after each kill.
/// `make crashtest` runs a thousand.
@Suite struct CrashTestSmokeTests {
    @Test func aFewKilledWritersLeaveAStoreThatHoldsEveryAcknowledgedTransaction() throws {
        let directory = TemporaryStore()
        let result = try BinarySmokeTests.run(
            ["run", "--iterations", "4", "--seed", "7", "--reader-every", "2", "--directory", directory.path],
            executable: "crashtest")
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(result.output.contains("Writers killed:         4 "))
        #expect(result.output.contains("Readers killed:         2 "))
        #expect(result.output.hasSuffix("Problems:               0\n"))
        #expect(result.errors == "")
    }

    @Test func usageMistakesExitWith64() throws {
        let result = try BinarySmokeTests.run(["run", "--iterations", "many"], executable: "crashtest")
        #expect(result.status == 64)
        #expect(
            result.errors.hasPrefix(
                "Error: The value 'many' is invalid for '--iterations <n>': expected a non-negative integer\n"))
    }
}
