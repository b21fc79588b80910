import Foundation

@testable import ImageCore
@testable import ProxyEngine

/// Runs `executable` with `arguments` to completion; returns its exit status and everything it wrote to
/// stdout and stderr (together).
func runToCompletion(
    _ executable: URL, _ arguments: [String], environment: [String: String],
    in directory: URL = FileManager.default.temporaryDirectory
) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    process.currentDirectoryURL = directory
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = try pipe.fileHandleForReading.readToEnd() ?? Data()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
