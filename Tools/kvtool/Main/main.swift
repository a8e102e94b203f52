import Foundation
import KVToolCore

// A write to a closed pipe must fail with EPIPE, which kvtool reports, rather than kill the process with SIGPIPE
// before it can say that its output is incomplete.
signal(SIGPIPE, SIG_IGN)
// Everything happens in KVToolCore, so that tests run the same code in-process.
exit(KVTool.run(arguments: CommandLine.arguments.dropFirst()))
