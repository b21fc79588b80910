import Foundation
import HTTPTypes
import HummingbirdTesting
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// Runs `body` with a fixture origin serving `files` and a live proxy in front of it (test configuration,
/// loopback sources allowed, a fresh cache folder removed afterwards).
func withFixtures<Value: Sendable>(
    _ files: [String: TestOrigin.File], configure: (inout ProxyConfiguration) -> Void = { _ in },
    _ body: @Sendable (_ proxy: any TestClientProtocol, _ base: String, _ origin: TestOrigin) async throws -> Value
) async throws -> Value {
    try await withFixtureProxy(files, configure: configure) { proxy, _, base, origin in try await body(proxy, base, origin) }
}

/// Like ``withFixtures(_:configure:_:)``, with the proxy's runtime (its port, counters and metrics).
func withFixturesAndRuntime<Value: Sendable>(
    _ files: [String: TestOrigin.File], configure: (inout ProxyConfiguration) -> Void = { _ in },
    _ body: @Sendable (_ runtime: ProxyRuntime, _ base: String) async throws -> Value
) async throws -> Value {
    try await withFixtureProxy(files, configure: configure) { _, runtime, base, _ in try await body(runtime, base) }
}

func withFixtureProxy<Value: Sendable>(
    _ files: [String: TestOrigin.File], configure: (inout ProxyConfiguration) -> Void,
    _ body: @Sendable (any TestClientProtocol, ProxyRuntime, String, TestOrigin) async throws -> Value
) async throws -> Value {
    var configuration = testConfiguration()
    configuration.fetch.maxSourceBytes = 8 * 1024 * 1024
    configure(&configuration)
    defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
    let origin = TestOrigin(files)
    let final = configuration
    return try await origin.run { base in
        try await withProxy(final) { proxy, runtime in try await body(proxy, runtime, base, origin) }
    }
}

extension TestOrigin.File {
    static func jpeg(_ bytes: [UInt8], headers: [(String, String)] = []) -> Self {
        .init(bytes: bytes, contentType: "image/jpeg", headers: headers)
    }
    static func image(_ bytes: [UInt8], headers: [(String, String)] = [], etag: String? = nil) -> Self {
        .init(bytes: bytes, contentType: "application/octet-stream", headers: headers, etag: etag)
    }
}

extension HTTPField.Name {
    static let xCacheTier = HTTPField.Name("X-Cache")!
}
