import Foundation
import Testing

@testable import ProxyServer
@testable import ProxyEngine

/// Not an open proxy by accident (issue #56): a server that listens beyond loopback with neither a
/// signing key nor a source allowlist refuses to start, naming the three ways out; presets-only mode needs
/// an allowlist (or the explicit setting); the mode is a metric and on the status page.
@Suite struct AccessModeTests {
    static func configuration(
        bind: String, keys: [String] = [], hosts: [String] = [], presetsOnly: Bool = false, allowOpen: Bool = false
    ) -> ProxyConfiguration {
        var configuration = ProxyConfiguration()
        configuration.bind = ListenAddress(parsing: bind)!
        configuration.security.signingKeys = keys
        configuration.fetch.allowlist = HostAllowlist(patterns: hosts)
        configuration.presets.presetsOnly = presetsOnly
        configuration.security.allowOpenProxy = allowOpen
        return configuration
    }

    @Test func everyStartModeGetsItsModeOrItsRefusal() throws {
        for bind in ["127.0.0.1:8080", "127.0.0.53:80", "localhost:8080", "[::1]:8080"] {
            #expect(try AccessMode.of(Self.configuration(bind: bind)) == .localOnly, "\(bind)")
        }
        for bind in ["0.0.0.0:8080", ":8080", "[::]:8080", "10.0.0.5:8080", "images.internal:8080", "127.0.0.1.example:80"] {
            #expect(throws: ConfigurationError.self, "\(bind)") { try AccessMode.of(Self.configuration(bind: bind)) }
            #expect(try AccessMode.of(Self.configuration(bind: bind, keys: ["k"])) == .signed)
            #expect(try AccessMode.of(Self.configuration(bind: bind, hosts: ["*.example.com"])) == .allowlist)
            #expect(try AccessMode.of(Self.configuration(bind: bind, keys: ["k"], hosts: ["a.example"])) == .signedAllowlist)
            #expect(try AccessMode.of(Self.configuration(bind: bind, allowOpen: true)) == .open)
            // Presets-only answers unsigned requests: a key alone does not close it.
            #expect(throws: ConfigurationError.self) { try AccessMode.of(Self.configuration(bind: bind, keys: ["k"], presetsOnly: true)) }
            #expect(try AccessMode.of(Self.configuration(bind: bind, hosts: ["a.example"], presetsOnly: true)) == .allowlist)
            #expect(try AccessMode.of(Self.configuration(bind: bind, presetsOnly: true, allowOpen: true)) == .open)
        }
        do {
            _ = try AccessMode.of(Self.configuration(bind: "0.0.0.0:8080"))
        } catch {
            for way in ["IMAGEPROXY_SIGNING_KEY", "security.allowedHosts", "security.allowOpenProxy", "0.0.0.0:8080"] {
                #expect(error.message.contains(way), "the refusal names \(way): \(error.message)")
            }
        }
    }

    /// The binary as a container starts it (`IMAGEPROXY_BIND=0.0.0.0:…`, the Dockerfile's), with and without
    /// a key, an allowlist or the explicit setting; `--check-config` so that nothing listens.
    @Test func theBinaryRefusesAnOpenPublicStartAndSaysHowToFixIt() throws {
        func serve(_ environment: [String: String]) throws -> (status: Int32, output: String) {
            try runToCompletion(
                ServiceProcess.executableURL, ["serve", "--check-config"],
                environment: ["PATH": "/usr/bin:/bin", "IMAGEPROXY_BIND": "0.0.0.0:8080", "IMAGEPROXY_CACHE_DIR": "/nonexistent-ipx"]
                    .merging(environment) { $1 })
        }
        let refused = try serve([:])
        #expect(refused.status == 2 && refused.output.contains("refusing to start"), "\(refused.output)")
        #expect(refused.output.contains("IMAGEPROXY_SECURITY_ALLOW_OPEN_PROXY"), "\(refused.output)")
        let signed = try serve(["IMAGEPROXY_SIGNING_KEY": "a-key"])
        #expect(signed.status == 0 && signed.output.contains("access: signed"), "\(signed.output)")
        let listed = try serve(["IMAGEPROXY_SECURITY_ALLOWED_HOSTS": "images.example.com"])
        #expect(listed.status == 0 && listed.output.contains("access: allowlist"), "\(listed.output)")
        let open = try serve(["IMAGEPROXY_SECURITY_ALLOW_OPEN_PROXY": "true"])
        #expect(open.status == 0 && open.output.contains("access: open"), "\(open.output)")
        let presets = try serve(["IMAGEPROXY_SIGNING_KEY": "a-key", "IMAGEPROXY_HTTP_PRESETS_ONLY": "true"])
        #expect(presets.status == 2 && presets.output.contains("presets-only"), "\(presets.output)")
        let local = try serve(["IMAGEPROXY_BIND": "127.0.0.1:8080"])
        #expect(local.status == 0 && local.output.contains("access: local_only"), "\(local.output)")
    }

    @Test func theModeIsAMetricAndOnTheStatusPage() async throws {
        var configuration = testConfiguration()
        configuration.security.signingKeys = ["status-key"]
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        try await withProxy(configuration) { proxy, runtime in
            #expect(runtime.accessMode == .signed)
            let text = try runtime.metrics.registry.emitToString()
            #expect(text.contains("imageproxy_access_mode{mode=\"signed\"} 1"), "\(text.split(separator: "\n").filter { $0.contains("access_mode") })")
            #expect(text.contains("imageproxy_access_mode{mode=\"open\"} 0"))
            let page = try await proxy.execute(uri: "/status", method: .get, headers: [:], body: nil)
            #expect(String(buffer: page.body).contains("signed URLs only"))
        }
    }
}
