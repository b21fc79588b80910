import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import ProxyServer
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// The folder every test's cache folder is made in: one per test process, removed when the process exits
/// (a cache whose runtime finishes a write after its test removed the folder leaves nothing behind).
let testCacheParent: URL = {
    let parent = FileManager.default.temporaryDirectory.appendingPathComponent("imageproxy-test-caches-\(getpid())")
    try? FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
    atexit {
        try? FileManager.default.removeItem(
            at: FileManager.default.temporaryDirectory.appendingPathComponent("imageproxy-test-caches-\(getpid())"))
    }
    return parent
}()

/// A proxy configuration for tests: loopback sources allowed, short timeouts, no retries, a fresh
/// temporary cache folder.
func testConfiguration() -> ProxyConfiguration {
    var configuration = ProxyConfiguration()
    configuration.bind = ListenAddress(host: "127.0.0.1", port: 0)
    configuration.fetch.policy.allowLoopback = true
    configuration.fetch.timeoutMilliseconds = 1000
    configuration.fetch.maxSourceBytes = 1024 * 1024
    configuration.fetch.retries = 0
    configuration.cache.disk.directory = testCacheParent.appendingPathComponent("imageproxy-test-\(UUID().uuidString)").path
    configuration.cache.freshness.minTTL = 0
    return configuration
}

/// Runs `body` with a live origin and a live proxy (configured by `configure`), both on 127.0.0.1:0.
/// The cache folder is removed afterwards.
func withOriginAndProxy<Value: Sendable>(
    configure: (inout ProxyConfiguration) -> Void = { _ in },
    _ body: @Sendable (_ proxy: any TestClientProtocol, _ origin: String, _ hits: TestOrigin.Hits) async throws -> Value
) async throws -> Value {
    try await withOriginAndRuntime(configure: configure) { proxy, origin, hits, _ in try await body(proxy, origin, hits) }
}

/// Runs `body` with a live proxy built from `configuration` (the cache folder is kept, so a second
/// call with the same configuration is a restart).
func withProxy<Value: Sendable>(
    _ configuration: ProxyConfiguration, accessLogger: Logger? = nil,
    logger: Logger = Logger(label: "test-proxy", factory: { _ in SwiftLogNoOpLogHandler() }),
    _ body: @Sendable (_ proxy: any TestClientProtocol, _ runtime: ProxyRuntime) async throws -> Value
) async throws -> Value {
    let runtime = try ProxyRuntime(configuration: configuration, logger: logger, accessLogger: accessLogger)
    let proxy = ProxyApplication.make(runtime: runtime, logger: logger)
    return try await proxy.test(.live) { client in try await body(client, runtime) }
}

extension TestClientProtocol {
    /// GET `/img` with the given query (values percent-encoded here).
    func image(_ parameters: [(String, String)], headers: HTTPFields = [:]) async throws -> TestResponse {
        let query = parameters.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.1)" }
            .joined(separator: "&")
        return try await execute(uri: "/img?\(query)", method: .get, headers: headers, body: nil)
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var bytes: [UInt8] { Array(buffer: body) }
}

/// Like ``withOriginAndProxy(configure:_:)``, with the proxy's runtime (its metrics and queues) too.
func withOriginAndRuntime<Value: Sendable>(
    configure: (inout ProxyConfiguration) -> Void = { _ in },
    _ body: @Sendable (_ proxy: any TestClientProtocol, _ origin: String, _ hits: TestOrigin.Hits, _ runtime: ProxyRuntime) async throws -> Value
) async throws -> Value {
    var configuration = testConfiguration()
    configure(&configuration)
    defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
    let origin = TestOrigin()
    let finalConfiguration = configuration
    return try await origin.makeApplication().test(.live) { originClient in
        let base = "http://127.0.0.1:\(originClient.port!)"
        return try await withProxy(finalConfiguration) { client, runtime in try await body(client, base, origin.hits, runtime) }
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) async throws -> Bool {
    let end = ContinuousClock.now + timeout
    while ContinuousClock.now < end {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
