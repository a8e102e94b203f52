import Foundation

// crashtest: see CrashTest.main. `swift run crashtest run --iterations 50`, or `make crashtest`.
exit(CrashTest.main(Array(CommandLine.arguments.dropFirst())))
