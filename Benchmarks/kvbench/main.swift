import Foundation

// kvbench: see KVBench.main. Release builds only: `swift run -c release kvbench --help`.
exit(KVBench.main(Array(CommandLine.arguments.dropFirst())))
