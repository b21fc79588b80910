import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
@testable import ImageCore
@testable import ProxyEngine
#endif

/// The real `ImageProxy` executable (built by `swift test` next to the test bundle), run as a child process.
final class ServiceProcess: Sendable {
    let process: Process
    /// The port it listens on, read from its start-up log line.
    let port: Int
    private let exitStatus = Mutex<Int32?>(nil)
    /// What it wrote to stderr so far (its log).
    private let collected: CollectedOutput
    var output: String { collected.text.withLock { $0 } }

    /// stderr as it arrives.
    final class CollectedOutput: Sendable {
        let text = Mutex("")
    }
    private let exited: AsyncStream<Int32>

    /// Where `swift build` put the executable: beside the test bundle.
    static var executableURL: URL {
        let bundleDirectory = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("ImageProxy"),
            bundleDirectory.appendingPathComponent("ImageProxy"),
            Bundle.main.bundleURL.appendingPathComponent("ImageProxy"),
        ].compactMap { $0 }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    /// Starts the service with `environment` (IMAGEPROXY_BIND is set to 127.0.0.1:0) in a temporary folder.
    init(environment: [String: String], arguments: [String] = []) async throws {
        let process = Process()
        process.executableURL = Self.executableURL
        process.arguments = arguments
        var merged = ["PATH": "/usr/bin:/bin", "IMAGEPROXY_BIND": "127.0.0.1:0"]
        merged.merge(environment) { $1 }
        process.environment = merged
        process.currentDirectoryURL = FileManager.default.temporaryDirectory
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.exited = stream
        process.terminationHandler = { finished in
            continuation.yield(finished.terminationStatus)
            continuation.finish()
        }
        try process.run()
        self.process = process

        // Collect stderr in the background; wait (at most 20 s) for the "listening on host:port" line.
        let output = Mutex("")
        let collected = CollectedOutput()
        errors.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            let text = String(decoding: chunk, as: UTF8.self)
            output.withLock { $0 += text }
            collected.text.withLock { $0 += text }
        }
        self.collected = collected
        let deadline = ContinuousClock.now + .seconds(20)
        var port: Int?
        while ContinuousClock.now < deadline {
            let text = output.withLock { $0 }
            if let range = text.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(text[range].split(separator: ":").last!)
                break
            }
            if !process.isRunning {
                try? await Task.sleep(for: .milliseconds(100))  // let the last output arrive
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard let port else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw ServiceProcessError.didNotStart(output.withLock { $0 })
        }
        self.port = port
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to exit, at most `timeout`; nil when it is still running.
    func waitForExit(timeout: Duration) async -> Int32? {
        let stream = exited
        return await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await status in stream { return status }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

enum ServiceProcessError: Error {
    case didNotStart(String)
}

/// Whether a TCP connection to 127.0.0.1:`port` is accepted now.
func canConnect(port: Int) -> Bool {
    (try? RawConnection(port: port)) != nil
}

/// A plain HTTP GET over a new connection; returns status and body.
func httpGet(port: Int, path: String, timeout: TimeInterval = 20) async throws -> (status: Int, body: Data) {
    let (status, body, _) = try await httpRequest(port: port, path: path, timeout: timeout)
    return (status, body)
}

/// An HTTP request over a new connection; returns status, body and response headers.
func httpRequest(
    port: Int, path: String, method: String = "GET", body: Data? = nil, headers requestHeaders: [String: String] = [:],
    timeout: TimeInterval = 20
) async throws -> (status: Int, body: Data, headers: [String: String]) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
    request.timeoutInterval = timeout
    request.httpMethod = method
    request.httpBody = body
    for (name, value) in requestHeaders { request.setValue(value, forHTTPHeaderField: name) }
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = 16
    let session = URLSession(configuration: configuration)
    defer { session.finishTasksAndInvalidate() }
    let (data, response) = try await session.data(for: request)
    let http = response as? HTTPURLResponse
    var headers: [String: String] = [:]
    for (name, value) in http?.allHeaderFields ?? [:] {
        headers[String(describing: name).lowercased()] = String(describing: value)
    }
    return (http?.statusCode ?? 0, data, headers)
}
