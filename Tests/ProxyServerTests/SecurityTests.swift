import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ProxyServer
import TestSupport
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// Signed URLs, source restrictions, loops, security headers, hostile input.
@Suite(.timeLimit(.minutes(2))) struct SecurityTests {
    @Test func signaturesMatchTheReferenceHMAC() throws {
        let signer = try #require(URLSigner(keys: ["secret"]))
        // Computed with Python's hmac/hashlib and Node's crypto (base64url, no padding).
        let signed = signer.sign("/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300")
        #expect(signed == "/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&sig=UZDxHmk3FQlQkVzaxWKkatGBUGAasjWQFz_TI60vwt8")
        #expect(URLSigner(keys: []) == nil)
    }

    @Test func signedURLsAreEnforced() async throws {
        try await withOriginAndProxy(configure: { $0.security.signingKeys = ["new-key", "old-key"] }) { proxy, origin, _ in
            let path = "/img?url=\(origin.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)%2Fphoto.jpg&w=40"
            func status(_ target: String) async throws -> HTTPResponse.Status {
                try await proxy.execute(uri: target, method: .get, headers: [:], body: nil).status
            }
            let current = try #require(URLSigner(keys: ["new-key"])).sign(path)
            let previous = try #require(URLSigner(keys: ["old-key"])).sign(path)
            let retired = try #require(URLSigner(keys: ["retired-key"])).sign(path)
            #expect(try await status(current) == .ok)
            #expect(try await status(previous) == .ok, "rotation: the second key still verifies")
            #expect(try await status(retired) == .forbidden)
            #expect(try await status(path) == .forbidden, "missing")
            #expect(try await status(path + "&sig=") == .forbidden)
            #expect(try await status(current.replacingOccurrences(of: "w=40", with: "w=41")) == .forbidden, "tampered")
            #expect(try await status(current + "&h=10") == .forbidden, "sig must be last")
            let missing = try await proxy.execute(uri: path, method: .get, headers: [:], body: nil)
            #expect(missing.text.contains("signature required"))
        }
    }

    @Test func responsesCarrySecurityHeaders() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            for response in [
                try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "20")]),
                try await proxy.image([("url", "\(origin)/missing")]),
            ] {
                #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                #expect(response.headers[.contentSecurityPolicy] == "default-src 'none'")
            }
        }
    }

    @Test func allowlistLoopsAndTheHopMarker() async throws {
        try await withOriginAndProxy(configure: { $0.fetch.allowlist = HostAllowlist(patterns: ["*.example.com", "images.example.org"]) }) { proxy, origin, hits in
            let refused = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "20")])
            #expect(refused.status == .forbidden)
            #expect(hits.count("/photo.jpg") == 0)
        }
        let list = HostAllowlist(patterns: ["*.example.com", "images.example.org"])
        #expect(list.allows("cdn.example.com") && list.allows("a.b.example.com") && list.allows("images.example.org"))
        #expect(!list.allows("example.com") && !list.allows("evil-example.com") && !list.allows("example.org"))
        #expect(HostAllowlist(patterns: []).allows("anything.test"))

        try await withOriginAndProxy { proxy, origin, _ in
            #expect(try await proxy.image([("url", "\(origin)/hop-checked.jpg"), ("w", "20")]).status == .ok, "origin sees the hop marker")
            let looped = try await proxy.image([("url", "\(origin)/photo.jpg")], headers: [HTTPField.Name("X-ImageProxy-Hop")!: "1"])
            #expect(looped.status == .forbidden)
            let own = "http://127.0.0.1:\(proxy.port!)/img?url=\(origin)/photo.jpg"
            let selfReferencing = try await proxy.image([("url", own), ("w", "20")])
            #expect(selfReferencing.status == .forbidden)
            #expect(selfReferencing.text.contains("points back"))
        }
    }

    @Test func originCredentialsGoOnlyToTheirHost() async throws {
        try await withOriginAndProxy(configure: { $0.fetch.originHeaders = [OriginHeader(parsing: "127.0.0.1=Authorization: Bearer origin-secret")!] }) {
            proxy, origin, hits in
            #expect(try await proxy.image([("url", "\(origin)/cred.jpg"), ("w", "20")]).status == .ok)
            let redirected = try await proxy.image([("url", "\(origin)/cred-redirect"), ("w", "20")])
            #expect(redirected.status == .ok, "the credentials were dropped when the redirect left 127.0.0.1")
            #expect(hits.count("/no-cred.jpg") == 1)
            let otherName = origin.replacingOccurrences(of: "127.0.0.1", with: "localhost")
            #expect(try await proxy.image([("url", "\(otherName)/cred.jpg"), ("w", "20")]).status == .badGateway)
        }
        #expect(OriginHeader(parsing: "*.example.com=Authorization: Basic eA==")?.hostPattern == "*.example.com")
        #expect(OriginHeader(parsing: "no-equals-sign") == nil)
        #expect(OriginHeader(parsing: "host=NoColon") == nil)
    }

    @Test func namesPinnedToRefusedAddressesAreRefused() async throws {
        // CURLOPT_RESOLVE maps a made-up name to loopback: the policy judges the address, not the name.
        try await withOriginAndProxy(configure: { configuration in
            configuration.fetch.policy = AddressPolicy()
            configuration.fetch.resolve = ["pinned.test:1:127.0.0.1"]
        }) { proxy, origin, hits in
            let port = String(origin.split(separator: ":").last!)
            try await withProxyPinning(port: port, loopback: false) { proxy in
                let response = try await proxy.image([("url", "http://pinned.test:\(port)/photo.jpg"), ("w", "20")])
                #expect(response.status == .forbidden)
            }
            try await withProxyPinning(port: port, loopback: true) { proxy in
                let response = try await proxy.image([("url", "http://pinned.test:\(port)/photo.jpg"), ("w", "20")])
                #expect(response.status == .ok, "the pinned name reaches the origin when loopback is allowed")
            }
            #expect(hits.count("/photo.jpg") == 1)
            _ = proxy
        }
        let cgnat = try #require(IPAddress("100.64.0.1"))
        #expect(!AddressPolicy().permits(cgnat))
        #expect(AddressPolicy(extraClasses: [.sharedCGNAT]).permits(cgnat))
    }

    /// A proxy whose `fetch.resolve` pins `pinned.test` to 127.0.0.1 on `port`.
    private func withProxyPinning(
        port: String, loopback: Bool, _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var configuration = testConfiguration()
        configuration.fetch.policy.allowLoopback = loopback
        configuration.fetch.resolve = ["pinned.test:\(port):127.0.0.1"]
        let final = configuration
        defer { try? FileManager.default.removeItem(atPath: final.cache.disk.directory) }
        try await withProxy(final) { proxy, _ in try await body(proxy) }
    }

    @Test func loopbackSpellingsAreRefusedAtOnce() async throws {
        // With a 5 s fetch timeout, "at once" (< 2.5 s, even on a loaded machine) cannot be a timeout.
        try await withOriginAndProxy(configure: { $0.fetch.policy = AddressPolicy(); $0.fetch.timeoutMilliseconds = 5000 }) { proxy, origin, hits in
            let port = String(origin.split(separator: ":").last!)
            for host in ["127.0.0.1", "127.1", "2130706433", "0.0.0.0", "localhost", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]"] {
                let started = ContinuousClock.now
                let response = try await proxy.image([("url", "http://\(host):\(port)/photo.jpg"), ("w", "20")])
                #expect(response.status == .forbidden, "\(host): \(response.status)")
                #expect(ContinuousClock.now - started < .milliseconds(2500), "\(host) refused without a timeout")
            }
            #expect(hits.count("/photo.jpg") == 0)
        }
    }

    @Test func hostileImagesGetTheir4xxAndTheServiceCarriesOn() async throws {
        try await withOriginAndProxy(configure: { $0.image.transformer.maxFrames = 25 }) { proxy, origin, _ in
            let cases: [(String, HTTPResponse.Status)] = [
                ("/bomb.png", .unprocessableContent),
                ("/truncated.png", .unprocessableContent),
                ("/garbage.jpg", .unsupportedMediaType),
                ("/image.svg", .unsupportedMediaType),
                ("/corrupt.jpg", .unprocessableContent),
            ]
            let residentBefore = ProcessStatistics.current()?.residentMemoryBytes ?? 0
            for (path, status) in cases {
                let started = ContinuousClock.now
                let response = try await proxy.image([("url", origin + path), ("w", "50")])
                #expect(response.status == status, "\(path): \(response.status) \(response.text)")
                // Decoding 400 megapixels would take tens of seconds; a margin for loaded CI machines.
                #expect(ContinuousClock.now - started < .seconds(5), "\(path) answered without decoding")
            }
            let growth = (ProcessStatistics.current()?.residentMemoryBytes ?? 0) - residentBefore
            #expect(growth < 100_000_000, "refused from headers: RSS grew \(Int(growth) / 1_000_000) MB")
            let frames = try await proxy.image([("url", "\(origin)/many-frames.gif"), ("format", "gif")])
            #expect(frames.status == .ok)
            #expect(try VipsImage.decodeAllFrames(frames.bytes).frames == 25, "frames beyond image.maxFrames are dropped")
            let normal = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "64")])
            #expect(normal.status == .ok)
            #expect(try VipsImage.decode(normal.bytes).width == 64)
        }
        // SVG sources are read only with image.allowSVGInput (libvips' loader stays blocked until a transformer
        // that allows them starts; other tests in this process may have started one).
        #expect(throws: ImagingError.formatDisabled(format: "SVG", key: "image.allowSVGInput")) {
            try ImageTransformer(settings: ImageTransformer.Settings()).plan(
                HostileImages.svg, request: ImageRequest(query: [("url", "https://example.com/a.svg"), ("w", "64")], limits: .init(maxDimension: 4096)), choice: .fixed(.png))
        }
    }

    @Test func slowTransformsAreStoppedByTheKillFlag() async throws {
        try await withOriginAndProxy(configure: { $0.image.transformer.maxTransformMilliseconds = 400 }) { proxy, origin, _ in
            // A 4000×3000 PNG encode takes far longer than 400 ms; a 40 px thumbnail far less.
            let started = ContinuousClock.now
            let slow = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "4000"), ("enlarge", "1"), ("format", "png")])
            #expect(slow.status == .serviceUnavailable)
            #expect(slow.text.contains("longer than 400 ms"))
            #expect(ContinuousClock.now - started < .seconds(3), "stopped, not finished")
            let quick = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "40")])
            #expect(quick.status == .ok)
        }
    }

    @Test func queryParserNeverCrashesOnRandomInput() throws {
        var generator = SystemRandomNumberGenerator()
        let names = ["url", "w", "h", "fit", "format", "q", "dpr", "filter", "enlarge", "g", "fp", "bg", "progressive", "lqip", "x", ""]
        let values = ["", "0", "1", "-1", "4096", "4097", "1e309", "nan", "0x10", "cover", "pad", "smart", "blur:2,sharpen",
                      "round:0", "ff00ff", "zzzzzz", "0.5,0.5", "2,2", "http://a.example/x.jpg", "ftp://a/b", "%00", "\u{0}",
                      String(repeating: "9", count: 400), "rotate:45", "trim:1", "http://[::1", "https://é.example/"]
        for _ in 0..<5000 {
            var pairs: [(name: String, value: String)] = []
            for _ in 0..<Int.random(in: 0...8, using: &generator) {
                var value = values.randomElement(using: &generator)!
                if Bool.random(using: &generator) {
                    value += String(UnicodeScalar(UInt8.random(in: 0...127, using: &generator)))
                }
                pairs.append((names.randomElement(using: &generator)!, value))
            }
            do {
                let request = try ImageRequest(query: pairs, limits: .init(maxDimension: 4096))
                #expect(request.width.map { (1...4096).contains($0) } ?? true)
            } catch {
                #expect(error.httpStatus == 400)
            }
        }
    }
}
