import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// imgproxy and thumbor URLs through the real server, origin and libvips: each is the variant its native
/// twin is (same bytes, same ETag, one cache entry), signed as the original signs, with the native limits.
@Suite(.timeLimit(.minutes(3))) struct DialectTests {
    static let photo: [UInt8] = try! TestImages.jpeg(width: 640, height: 480)
    /// A key and salt in imgproxy's hex form.
    static let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"

    static func get(_ proxy: any TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get) async throws -> TestResponse {
        try await proxy.execute(uri: uri, method: method, headers: [:], body: nil)
    }

    @Test func signerVectorsFromTheClientLibrariesTestSuites() throws {
        // imgproxy's own test suite (security/signature_test.go): keys and salts "test-key"/"test-salt" and
        // "test-key2"/"test-salt2" (here in the hex form the configuration takes), path "asd" (imgproxy adds
        // the leading slash a path after the signature always has).
        let imgproxy = try #require(try ImgproxySigner(keys: ["746573742d6b6579"], salts: ["746573742d73616c74"]))
        #expect(imgproxy.signature(of: "/asd") == "oWaL7QoW5TsgbuiS9-5-DI8S3Ibbo1gdB2SteJh3a20")
        #expect(imgproxy.verify(signature: "oWaL7QoW5TsgbuiS9-5-DI8S3Ibbo1gdB2SteJh3a20", path: "/asd"))
        #expect(!imgproxy.verify(signature: "oWaL7QoW5Ts", path: "/asd"), "a truncated signature when the size is 32")
        let truncated = try #require(try ImgproxySigner(keys: ["746573742d6b6579"], salts: ["746573742d73616c74"], signatureSize: 8))
        #expect(truncated.signature(of: "/asd") == "oWaL7QoW5Ts")
        #expect(truncated.verify(signature: "oWaL7QoW5Ts", path: "/asd"))
        let rotated = try #require(
            try ImgproxySigner(keys: ["746573742d6b6579", "746573742d6b657932"], salts: ["746573742d73616c74", "746573742d73616c7432"]))
        #expect(rotated.verify(signature: "jYz1UZ7j1BCdSzH3pZhaYf0iuz0vusoOTdqJsUT6WXI", path: "/asd"))
        #expect(rotated.verify(signature: "oWaL7QoW5TsgbuiS9-5-DI8S3Ibbo1gdB2SteJh3a20", path: "/asd"))
        #expect(!rotated.verify(signature: "dtLwhdnPPis", path: "/asd"))
        #expect(throws: ConfigurationError.self) { try ImgproxySigner(keys: ["zz"], salts: ["00"]) }
        #expect(throws: ConfigurationError.self) { try ImgproxySigner(keys: ["00"], salts: []) }
        #expect(try ImgproxySigner(keys: [], salts: []) == nil)

        // libthumbor's known URLs (key "my-security-key"), as its ports' test suites carry them.
        let thumbor = try #require(ThumborSigner(securityKey: "my-security-key"))
        let known = [
            ("8ammJH8D-7tXy6kU3lTvoXlhu4o=", "300x200/my.server.com/some/path/to/image.jpg"),
            ("Ps3ORJDqxlSQ8y00T29GdNAh2CY=", "meta/my.server.com/some/path/to/image.jpg"),
            ("-2NHpejRK2CyPAm61FigfQgJBxw=", "smart/my.server.com/some/path/to/image.jpg"),
            ("uvLnA6TJlF-Cc-L8z9pEtfasO3s=", "fit-in/my.server.com/some/path/to/image.jpg"),
            ("ZZtPCw-BLYN1g42Kh8xTcRs0Qls=", "filters:brightness(10):contrast(20)/my.server.com/some/path/to/image.jpg"),
        ]
        for (signature, path) in known {
            #expect(thumbor.signature(of: path) == signature)
            #expect(thumbor.verify(signature: signature, path: path))
            #expect(!thumbor.verify(signature: signature, path: path + "x"))
        }
    }

    @Test func imgproxyURLsAreTheirNativeTwinsSignedAsImgproxySigns() async throws {
        try await withFixtures(["/cat.jpg": .jpeg(Self.photo)], configure: {
            $0.compat.imgproxy.enabled = true
            $0.compat.imgproxy.keys = [Self.key]
            $0.compat.imgproxy.salts = [Self.salt]
        }) { proxy, base, _ in
            let signer = try #require(try ImgproxySigner(keys: [Self.key], salts: [Self.salt]))
            let path = "/rs:fill:300:200/g:nowe/plain/\(base)/cat.jpg@png"
            let dialect = try await Self.get(proxy, "/\(signer.signature(of: path))\(path)")
            #expect(dialect.status == .ok && dialect.headers[.contentType] == "image/png")
            let image = try VipsImage.decode(dialect.bytes)
            #expect(image.width == 300 && image.height == 200)
            #expect(dialect.headers[.xCacheTier] == "miss")
            let twin = try await proxy.image([("url", base + "/cat.jpg"), ("w", "300"), ("h", "200"), ("fit", "cover"), ("g", "northwest"), ("format", "png")])
            #expect(twin.status == .ok && twin.headers[.eTag] == dialect.headers[.eTag] && twin.bytes == dialect.bytes)
            #expect(twin.headers[.xCacheTier] == "memory", "one variant: the native twin is the dialect URL's cache entry")

            // The base64 form, and the same URL unsigned, wrongly signed, or with a changed option.
            let encoded = Data((base + "/cat.jpg").utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let base64Path = "/w:160/\(encoded).webp"
            let base64 = try await Self.get(proxy, "/\(signer.signature(of: base64Path))\(base64Path)")
            #expect(base64.status == .ok && base64.headers[.contentType] == "image/webp")
            #expect(try VipsImage.decode(base64.bytes).width == 160)
            for refused in ["/insecure\(path)", "/\(signer.signature(of: path))/rs:fill:301:200/g:nowe/plain/\(base)/cat.jpg@png"] {
                let answer = try await Self.get(proxy, refused)
                #expect(answer.status == .forbidden && answer.text.contains("invalid imgproxy signature"), "\(answer.text)")
            }

            // An option the engine cannot honour is a 400 naming it; a native limit names the option used.
            let padded = "/pd:10/w:100/plain/\(base)/cat.jpg"
            let refused = try await Self.get(proxy, "/\(signer.signature(of: padded))\(padded)")
            #expect(refused.status == .badRequest && refused.text.contains("'pd'"), "\(refused.text)")
            let huge = "/width:99999/plain/\(base)/cat.jpg"
            let tooWide = try await Self.get(proxy, "/\(signer.signature(of: huge))\(huge)")
            #expect(tooWide.status == .badRequest && tooWide.text.contains("'width'"), "\(tooWide.text)")

            // Download names, expiry and HEAD.
            let named = "/fn:holiday/att:1/w:100/plain/\(base)/cat.jpg@jpg"
            let download = try await Self.get(proxy, "/\(signer.signature(of: named))\(named)")
            #expect(download.headers[.contentDisposition] == "attachment; filename=\"holiday.jpg\"")
            let expired = "/exp:1000/w:100/plain/\(base)/cat.jpg"
            let gone = try await Self.get(proxy, "/\(signer.signature(of: expired))\(expired)")
            #expect(gone.status == .notFound && gone.text.contains("expired"))
            let future = "/exp:\(Int(Date().timeIntervalSince1970) + 3600)/w:100/plain/\(base)/cat.jpg"
            #expect(try await Self.get(proxy, "/\(signer.signature(of: future))\(future)").status == .ok)
            let head = try await Self.get(proxy, "/\(signer.signature(of: path))\(path)", method: .head)
            #expect(head.status == .ok && head.bytes.isEmpty && head.headers[.eTag] == dialect.headers[.eTag])

            // Native routes win over the dialect at /.
            #expect(try await Self.get(proxy, "/health").status == .ok)
            let metrics = try PrometheusText(try await Self.get(proxy, "/metrics").text)
            #expect((metrics.samples["imageproxy_http_requests_total{route=\"imgproxy\",status=\"200\"}"] ?? 0) >= 3)
        }
    }

    @Test func autoFitCoversWhenBoxAndSourceShareAnOrientation() async throws {
        try await withFixtures(["/cat.jpg": .jpeg(Self.photo)], configure: { $0.compat.imgproxy.enabled = true }) { proxy, base, _ in
            for (box, expected) in [((300, 200), (300, 200)), ((200, 300), (200, 150)), ((300, 0), (300, 225))] {
                let dialect = try await Self.get(proxy, "/insecure/rs:auto:\(box.0):\(box.1)/plain/\(base)/cat.jpg")
                let image = try VipsImage.decode(dialect.bytes)
                #expect(dialect.status == .ok && image.width == expected.0 && image.height == expected.1, "\(box)")
                var native = [("url", base + "/cat.jpg"), ("w", String(box.0)), ("fit", "auto"), ("format", "source")]
                if box.1 > 0 { native.append(("h", String(box.1))) }
                #expect(try await proxy.image(native).headers[.eTag] == dialect.headers[.eTag])
            }
        }
    }

    @Test func theNativeFeaturesTheDialectsNeed() async throws {
        // format=source, lighten:D and grayscale:601 through the real server and libvips.
        let solid = try TestImages.solid(width: 64, height: 48, red: 200, green: 100, blue: 50)
        let png = try solid.encoded(as: .png).bytes
        let webp = try solid.encoded(as: .webp).bytes
        try await withFixtures(
            ["/s.png": .image(png), "/s.webp": .image(webp), "/s.jpg": .jpeg(Self.photo)]
        ) { proxy, base, _ in
            for (path, type) in [("/s.png", "image/png"), ("/s.webp", "image/webp"), ("/s.jpg", "image/jpeg")] {
                let answer = try await proxy.image([("url", base + path), ("w", "32"), ("format", "source")])
                #expect(answer.status == .ok && answer.headers[.contentType] == type, "\(path): \(answer.headers[.contentType] ?? "")")
                #expect(answer.headers[.vary] == nil, "the source's format does not depend on Accept")
            }
            let lightened = try await proxy.image([("url", base + "/s.png"), ("format", "png"), ("filter", "lighten:30")])
            #expect(try OverlayTests.rgb(VipsImage.decode(lightened.bytes), 5, 5) == [230, 130, 80])
            let darkened = try await proxy.image([("url", base + "/s.png"), ("format", "png"), ("filter", "lighten:-60")])
            #expect(try OverlayTests.rgb(VipsImage.decode(darkened.bytes), 5, 5) == [140, 40, 0], "clamped at 0")
            // Rec. 601 luma of (200, 100, 50): 0.299·200 + 0.587·100 + 0.114·50 = 124.2, on every band.
            let luma = try await proxy.image([("url", base + "/s.png"), ("format", "png"), ("filter", "grayscale:601")])
            let grey = try OverlayTests.rgb(VipsImage.decode(luma.bytes), 5, 5)
            #expect(grey.allSatisfy { abs($0 - 124) <= 1 }, "\(grey)")
            let refused = try await proxy.image([("url", base + "/s.png"), ("filter", "lighten:300")])
            #expect(refused.status == .badRequest && refused.text.contains("lighten"))
        }
    }

    @Test func imgproxyWithoutKeysTakesAnySignatureUnderItsPrefix() async throws {
        try await withFixtures(["/cat.jpg": .jpeg(Self.photo)], configure: {
            $0.compat.imgproxy.enabled = true
            $0.compat.imgproxy.prefix = "/imgproxy/"
        }) { proxy, base, _ in
            let answer = try await Self.get(proxy, "/imgproxy/insecure/rs:fit:100:100/plain/\(base)/cat.jpg")
            let width = try VipsImage.decode(answer.bytes).width
            #expect(answer.status == .ok && width == 100)
            #expect(try await Self.get(proxy, "/anything/rs:fit:100:100/plain/\(base)/cat.jpg").status == .notFound, "outside the prefix")
        }
    }

    @Test func thumborURLsSignedOrUnsafeAndMeta() async throws {
        try await withFixtures(["/cat.jpg": .jpeg(Self.photo)], configure: {
            $0.compat.thumbor.enabled = true
            $0.compat.thumbor.securityKey = "my-security-key"
        }) { proxy, base, _ in
            let image = base.replacingOccurrences(of: "http://", with: "") + "/cat.jpg"
            let signer = try #require(ThumborSigner(securityKey: "my-security-key"))
            let path = "fit-in/200x200/filters:format(webp):quality(60)/\(image)"
            let signed = try await Self.get(proxy, "/\(signer.signature(of: path))/\(path)")
            #expect(signed.status == .ok && signed.headers[.contentType] == "image/webp")
            let decoded = try VipsImage.decode(signed.bytes)
            #expect(decoded.width == 200 && decoded.height == 150)
            let twin = try await proxy.image([("url", base + "/cat.jpg"), ("w", "200"), ("h", "200"), ("format", "webp"), ("q", "60")])
            #expect(twin.headers[.eTag] == signed.headers[.eTag] && twin.headers[.xCacheTier] == "memory")

            let unsafe = try await Self.get(proxy, "/unsafe/\(path)")
            #expect(unsafe.status == .forbidden && unsafe.text.contains("compat.thumbor.allowUnsafe"))
            let wrong = try await Self.get(proxy, "/\(signer.signature(of: path))/fit-in/201x200/\(image)")
            #expect(wrong.status == .forbidden && wrong.text.contains("invalid thumbor signature"))

            let metaPath = "meta/\(image)"
            let meta = try await Self.get(proxy, "/\(signer.signature(of: metaPath))/\(metaPath)")
            #expect(meta.status == .ok && meta.headers[.contentType]?.hasPrefix("application/json") == true)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(meta.bytes)) as? [String: Any])
            #expect(object["width"] as? Int == 640 && object["height"] as? Int == 480)

            // Cover by default, enlarging (thumbor's default), and a flip.
            let coverPath = "-900x300/\(image)"
            let cover = try await Self.get(proxy, "/\(signer.signature(of: coverPath))/\(coverPath)")
            let covered = try VipsImage.decode(cover.bytes)
            #expect(cover.status == .ok && covered.width == 900 && covered.height == 300)
        }
    }

    @Test func theSameRulesAsTheNativeAPI() async throws {
        // The address policy: loopback sources refused unless allowed, whatever the dialect.
        try await withFixtures(["/cat.jpg": .jpeg(Self.photo)], configure: {
            $0.compat.thumbor.enabled = true
            $0.compat.thumbor.allowUnsafe = true
            $0.compat.thumbor.prefix = "/t"
            $0.fetch.policy.allowLoopback = false
        }) { proxy, base, _ in
            let image = base.replacingOccurrences(of: "http://", with: "") + "/cat.jpg"
            let refused = try await Self.get(proxy, "/t/unsafe/100x100/\(image)")
            let native = try await proxy.image([("url", base + "/cat.jpg"), ("w", "100")])
            #expect(refused.status == native.status && refused.status.code >= 400 && refused.status.code < 500, "\(refused.text)")
        }
    }

    @Test func configurationOfTheDialects() async throws {
        let both = ["IMAGEPROXY_COMPAT_IMGPROXY_ENABLED": "true", "IMAGEPROXY_COMPAT_THUMBOR_ENABLED": "true"]
        await #expect(throws: ConfigurationError.self) { try await ProxyConfiguration.load(filePath: nil, environment: both) }
        var apart = both
        apart["IMAGEPROXY_COMPAT_THUMBOR_PREFIX"] = "/thumbor"
        apart["IMAGEPROXY_COMPAT_THUMBOR_SECURITY_KEY"] = "secret"
        apart["IMAGEPROXY_COMPAT_THUMBOR_ALLOW_UNSAFE"] = "true"
        apart["IMGPROXY_KEY"] = Self.key
        apart["IMGPROXY_SALT"] = Self.salt
        apart["IMGPROXY_SIGNATURE_SIZE"] = "16"
        let loaded = try await ProxyConfiguration.load(filePath: nil, environment: apart)
        #expect(loaded.compat.thumbor.securityKey == "secret" && loaded.compat.thumbor.allowUnsafe)
        #expect(loaded.compat.imgproxy.keys == [Self.key] && loaded.compat.imgproxy.salts == [Self.salt])
        #expect(loaded.compat.imgproxy.signatureSize == 16)
        var unpaired = apart
        unpaired["IMGPROXY_SALT"] = nil
        await #expect(throws: ConfigurationError.self) { try await ProxyConfiguration.load(filePath: nil, environment: unpaired) }
        var noOverlay = apart
        noOverlay["IMAGEPROXY_COMPAT_IMGPROXY_WATERMARK"] = "logo"
        await #expect(throws: ConfigurationError.self) { try await ProxyConfiguration.load(filePath: nil, environment: noOverlay) }
        // A public listener: a dialect taking unsigned URLs makes the deployment open, whatever the native key.
        var public_ = apart
        public_["IMAGEPROXY_BIND"] = "0.0.0.0:8080"
        public_["IMAGEPROXY_SIGNING_KEY"] = "native-key"
        let publicConfiguration = try await ProxyConfiguration.load(filePath: nil, environment: public_)
        #expect(throws: ConfigurationError.self, "thumbor's unsafe/ URLs on a public address") { try AccessMode.of(publicConfiguration) }
        var signedOnly = publicConfiguration
        signedOnly.compat.thumbor.allowUnsafe = false
        #expect(try AccessMode.of(signedOnly) == .signed)
        signedOnly.compat.imgproxy.keys = []
        signedOnly.compat.imgproxy.salts = []
        #expect(throws: ConfigurationError.self, "imgproxy URLs without keys") { try AccessMode.of(signedOnly) }
        signedOnly.fetch.allowlist = HostAllowlist(patterns: ["images.example.com"])
        #expect(try AccessMode.of(signedOnly) == .allowlist)
        var badPrefix = apart
        badPrefix["IMAGEPROXY_COMPAT_IMGPROXY_PREFIX"] = "images"
        await #expect(throws: ConfigurationError.self) { try await ProxyConfiguration.load(filePath: nil, environment: badPrefix) }
    }
}
