import Foundation
import KVToolCore

// Everything happens in KVToolCore, so that tests run the same code in-process.
exit(KVTool.run(arguments: CommandLine.arguments.dropFirst()))
