import Foundation
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// The JavaScript (`clients/js`, `node --test`) and Python (`clients/python`, `unittest`) clients' own
/// tests, run against the real binary: each signs a URL that the binary then serves.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ClientLibraryTests {
    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a tool from the repository with `IMAGEPROXY_BINARY` set; returns its exit status and output.
    static func run(_ tool: String, _ arguments: [String], in folder: String) throws -> (status: Int32, output: String) {
        try runToCompletion(
            URL(fileURLWithPath: "/usr/bin/env"), [tool] + arguments,
            environment: [
                "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": NSTemporaryDirectory(),
                "IMAGEPROXY_BINARY": ServiceProcess.executableURL.path,
            ], in: root.appendingPathComponent(folder))
    }

    @Test func javaScriptClientTests() throws {
        let result = try Self.run("node", ["--test", "test/client.test.js", "test/live.test.js"], in: "clients/js")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("# pass 15") && result.output.contains("# skipped 0"), "every test ran: \(result.output)")
    }

    @Test func pythonClientTests() throws {
        let result = try Self.run("python3", ["-m", "unittest", "-v", "test_imageproxy_client"], in: "clients/python")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("Ran 14 tests") && !result.output.contains("skipped"), "every test ran: \(result.output)")
    }
}
