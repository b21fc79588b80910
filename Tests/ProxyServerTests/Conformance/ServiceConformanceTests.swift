import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// What frontends and the people on call meet around the images: cover boxes larger than the source,
/// methods, the favicon, libvips' messages in the log, and the status page's configuration and try-it link.
@Suite(.timeLimit(.minutes(2))) struct ServiceConformanceTests {
    static let photo = try! TestImages.jpeg(width: 800, height: 500)

    @Test func aCoverBoxLargerThanTheSourceKeepsTheBoxsAspect() async throws {
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)]) { proxy, base, _ in
            for (width, height, expected) in [(3000, 3000, (500, 500)), (1000, 400, (800, 320)), (300, 900, (167, 500)), (400, 300, (400, 300))] {
                for gravity in ["centre", "north", "smart"] {
                    let response = try await proxy.image([
                        ("url", base + "/p.jpg"), ("w", "\(width)"), ("h", "\(height)"), ("fit", "cover"), ("g", gravity),
                    ])
                    let image = try ImageCore.VipsImage.decode(response.bytes)
                    #expect(image.width == expected.0 && image.height == expected.1, "\(width)x\(height) \(gravity): \(image.width)x\(image.height)")
                }
            }
            let enlarged = try await proxy.image([("url", base + "/p.jpg"), ("w", "1000"), ("h", "1000"), ("fit", "cover"), ("enlarge", "1")])
            #expect(try ImageCore.VipsImage.decode(enlarged.bytes).width == 1000, "enlarge=1 still fills the box")
        }
    }

    @Test func otherMethodsGet405WithAllow() async throws {
        try await withFixtures([:]) { proxy, _, _ in
            for (method, path, allow) in [(HTTPRequest.Method.put, "/img?url=x", "GET, HEAD, OPTIONS"), (.post, "/info", "GET, OPTIONS"),
                                          (.get, "/prefetch", "POST, OPTIONS"), (.delete, "/img", "GET, HEAD, OPTIONS")] {
                let response = try await proxy.execute(uri: path, method: method, headers: [:], body: nil)
                #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                #expect(response.headers[.allow] == allow, "\(method) \(path): \(response.headers[.allow] ?? "none")")
            }
            let options = try await proxy.execute(uri: "/img", method: .options, headers: [:], body: nil)
            #expect(options.status == .noContent && options.headers[.allow] == "GET, HEAD, OPTIONS")
            #expect(try await proxy.execute(uri: "/nowhere", method: .get, headers: [:], body: nil).status == .notFound)
        }
    }

    @Test func theFaviconIsNoErrorOnTheStatusPage() async throws {
        try await withFixtures([:]) { proxy, _, _ in
            for _ in 0..<3 {
                #expect(try await proxy.execute(uri: "/favicon.ico", method: .get, headers: [:], body: nil).status == .noContent)
            }
            let page = try await proxy.execute(uri: "/", method: .get, headers: [:], body: nil).text
            #expect(!page.contains("<td>404</td>"), "the browser's icon request is not listed among the last errors")
        }
    }

    @Test func theStatusPageNamesSettingsByTheirKeysAndMasksOnlyCredentials() async throws {
        let configure: (inout ProxyConfiguration) -> Void = { configuration in
            configuration.security.signingKeys = ["sekrit-key"]
            configuration.cache.adminToken = "admin-token-1"
            configuration.fetch.originHeaders = [OriginHeader(parsing: "*.example.com=Authorization: Basic abc")!]
        }
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)], configure: configure) { proxy, base, _ in
            let page = try await proxy.execute(uri: "/", method: .get, headers: [.authorization: "Bearer admin-token-1"], body: nil).text
            for key in ["cache.dir", "fetch.timeoutMs", "server.maxHeaderBytes", "image.maxSourceFrames", "queue.order"] {
                #expect(page.contains("<td>\(key)</td>"), "\(key) shown by its configuration key")
            }
            #expect(!page.contains("cache.directory") && !page.contains("timeoutMilliseconds"))
            #expect(page.contains("<td>server.maxHeaderBytes</td><td>16384</td>"), "not a secret: shown")
            #expect(!page.contains("sekrit-key") && !page.contains("admin-token-1") && !page.contains("Basic abc"))

            // Try it: signed only for the admin.
            let source = StatusPage.percentEncode(base + "/p.jpg")
            let anonymous = try await proxy.execute(uri: "/status?url=\(source)&w=120", method: .get, headers: [:], body: nil).text
            #expect(!anonymous.contains("&amp;sig="), "no signature for anonymous visitors")
            #expect(anonymous.contains("Signed URLs are on"))
            let admin = try await proxy.execute(
                uri: "/status?url=\(source)&w=120", method: .get, headers: [.authorization: "Bearer admin-token-1"], body: nil
            ).text
            let link = try #require(admin.range(of: "src=\"/img?")).upperBound
            let target = "/img?" + String(admin[link...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
            #expect(target.contains("&sig="))
            let image = try await proxy.execute(uri: target, method: .get, headers: [:], body: nil)
            #expect(image.status == .ok, "the signed try-it link works: \(image.text)")
        }
    }

    /// Issue #29: the public page showed `fetch.proxy` in full (a proxy URL may carry a password), the
    /// resolve pins, the host allowlist and the cache folder. Without the admin token it shows none of
    /// them; with it, credentials stay masked, inside URLs too.
    @Test func thePublicStatusPageShowsNothingThatHelpsAnAttacker() async throws {
        let configure: (inout ProxyConfiguration) -> Void = { configuration in
            configuration.cache.adminToken = "admin-token-2"
            configuration.fetch.proxy = "http://proxyuser:proxypass@127.0.0.1:3128"
            configuration.fetch.resolve = ["pinned.internal:443:127.0.0.9"]
            configuration.fetch.allowlist = HostAllowlist(patterns: ["images.internal.example"])
        }
        try await withFixtureProxy(["/p.jpg": .jpeg(Self.photo)], configure: configure) { proxy, runtime, _, _ in
            let secrets = [
                "proxyuser", "proxypass", "127.0.0.1:3128", "pinned.internal", "127.0.0.9", "images.internal.example",
                runtime.configuration.cache.disk.directory, "admin-token-2", runtime.configuration.bind.host + ":",
            ]
            for path in ["/", "/status", "/status/live", "/status?url=x&w=10"] {
                let page = try await proxy.execute(uri: path, method: .get, headers: [:], body: nil)
                #expect(page.status == .ok)
                for secret in secrets { #expect(!page.text.contains(secret), "\(path) shows \(secret)") }
            }
            let anonymous = try await proxy.execute(uri: "/", method: .get, headers: [:], body: nil).text
            #expect(anonymous.contains("configuration-hidden") && anonymous.contains("ImageProxy status"))
            #expect(anonymous.contains("Last hour") && anonymous.contains("Caches"), "figures and charts stay public")
            let admin = try await proxy.execute(uri: "/", method: .get, headers: [.authorization: "Bearer admin-token-2"], body: nil).text
            #expect(admin.contains("<td>fetch.proxy</td><td>http://••••••@127.0.0.1:3128</td>"), "credentials masked inside URLs")
            #expect(!admin.contains("proxyuser") && !admin.contains("proxypass") && !admin.contains("admin-token-2"))
            #expect(admin.contains("pinned.internal"), "the admin sees the rest")
        }
        #expect(StatusPage.maskingURLCredentials("a https://u:p@h/x, s3://k@b") == "a https://••••••@h/x, s3://••••••@b")
    }

    @Test func libvipsMessagesGoThroughTheLoggerWithTheRequestID() async throws {
        // A baseline JPEG with a stray restart marker in its entropy-coded data: libjpeg warns
        // ("Corrupt JPEG data: premature end of data segment") and decodes the rest as grey.
        var damaged = try TestImages.noiseJPEG(width: 400, height: 300)
        damaged[damaged.count / 2] = 0xFF
        damaged[damaged.count / 2 + 1] = 0xD3
        let store = RecordingLogHandler.Store()
        let logger = Logger(label: "proxy", factory: { _ in RecordingLogHandler(store: store) })
        var configuration = testConfiguration()
        configuration.fetch.maxSourceBytes = 8 << 20
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        let origin = TestOrigin(["/damaged.jpg": .jpeg(damaged)])
        let final = configuration
        try await origin.run { base in
            try await withProxy(final, logger: logger) { proxy, _ in
                let response = try await proxy.image([("url", base + "/damaged.jpg"), ("w", "300")], headers: [HTTPField.Name("X-Request-Id")!: "warn-test-1"])
                #expect(response.status == .ok, "libjpeg warnings are tolerated")
            }
        }
        let messages = store.entries.filter { $0["message"] == "libvips message" }
        #expect(!messages.isEmpty, "libjpeg's warning reached the logger")
        #expect(messages.contains { ($0["text"] ?? "").contains("JPEG") && $0["request_id"] == "warn-test-1" }, "\(messages)")
        #expect(messages.count <= 10, "rate-limited")
    }
}
