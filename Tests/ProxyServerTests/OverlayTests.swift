import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// Watermarks and text overlays through the real server and libvips (issue #32): pixel checks of where
/// gravity and offsets put an overlay and of its opacity, tiling, a new overlay image making a new ETag,
/// overlays on every frame of an animation, per-request overlays behind their switch, and text drawn
/// literally within its box.
@Suite(.timeLimit(.minutes(3))) struct OverlayTests {
    /// A grey 400x300 base and a red 40x20 overlay, both PNG (exact pixels).
    static let base: [UInt8] = try! TestImages.solid(width: 400, height: 300, red: 128, green: 128, blue: 128).encoded(as: .png).bytes
    static let red: [UInt8] = try! TestImages.solid(width: 40, height: 20, red: 255, green: 0, blue: 0).encoded(as: .png).bytes
    static let blue: [UInt8] = try! TestImages.solid(width: 40, height: 20, red: 0, green: 0, blue: 255).encoded(as: .png).bytes

    static func png(_ bytes: [UInt8]) -> TestOrigin.File { .init(bytes: bytes, contentType: "image/png") }

    static func overlay(_ base: String, _ path: String = "/logo.png", configure: (inout OverlayPlacement) -> Void = { _ in })
        -> OverlayCatalog.Definition
    {
        var placement = OverlayPlacement()
        configure(&placement)
        return .init(source: try! SourceURL(parsing: base + path), placement: placement)
    }

    /// The overlays of these tests, on the origin at `base`.
    static func configure(_ configuration: inout ProxyConfiguration, base: String) {
        configuration.overlays.definitions = [
            "corner": overlay(base) { $0.x = 10; $0.y = 5 },
            "half": overlay(base) { $0.gravity = .northwest; $0.opacity = 0.5 },
            "tiled": overlay(base) { $0.tile = true; $0.x = 10; $0.y = 10 },
            "wide": overlay(base) { $0.gravity = .centre; $0.scale = 0.5 },
            "changing": overlay(base, "/changing.png") { $0.gravity = .northwest },
            "purgeable": overlay(base, "/purgeable.png") { $0.gravity = .northwest },
            "missing": overlay(base, "/nope.png"),
        ]
        configuration.cache.freshness.minTTL = 0
    }

    static func rgb(_ image: VipsImage, _ x: Int, _ y: Int) throws -> [Int] {
        try image.pixel(x: x, y: y).prefix(3).map { Int($0.rounded()) }
    }

    /// Every pixel's RGB of an 8-bit image, its samples read once: one libvips call a pixel, over a
    /// whole image, took long enough in a debug build for the proxy's idle timeout to close the
    /// kept-alive connection the next request went out on.
    static func rgbReader(_ image: VipsImage) throws -> (_ x: Int, _ y: Int) -> [Int] {
        let samples = try image.pixels(), bands = image.bands, width = image.width
        return { x, y in
            let offset = (y * width + x) * bands
            return samples[offset..<(offset + 3)].map { Int($0) }
        }
    }

    static let grey = [128, 128, 128]
    static let pureRed = [255, 0, 0]

    /// Runs `body` against a proxy whose overlays point at a live origin (their URLs need its port).
    func withOverlays(
        allowURL: Bool = false, allowText: Bool = false, configure: @escaping @Sendable (inout ProxyConfiguration) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol, String, TestOrigin) async throws -> Void
    ) async throws {
        try await withOverlaysAndRuntime(allowURL: allowURL, allowText: allowText, configure: configure) { proxy, base, origin, _ in
            try await body(proxy, base, origin)
        }
    }

    /// ``withOverlays(allowURL:allowText:configure:_:)`` with the proxy's runtime (its caches).
    func withOverlaysAndRuntime(
        allowURL: Bool = false, allowText: Bool = false, configure: @escaping @Sendable (inout ProxyConfiguration) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol, String, TestOrigin, ProxyRuntime) async throws -> Void
    ) async throws {
        let origin = TestOrigin([
            "/base.png": Self.png(Self.base), "/logo.png": Self.png(Self.red),
            "/changing.png": .init(bytes: Self.red, contentType: "image/png", headers: [("Cache-Control", "max-age=1")]),
            "/purgeable.png": .init(bytes: Self.red, contentType: "image/png", headers: [("Cache-Control", "max-age=86400")]),
            "/notimage.png": .init(bytes: Array("hello".utf8), contentType: "image/png"),
            "/anim.gif": .init(bytes: try TestImages.animation(width: 120, height: 80, frames: 4).encoded(as: .gif).bytes, contentType: "image/gif"),
        ])
        try await origin.run { base in
            var configuration = testConfiguration()
            Self.configure(&configuration, base: base)
            configuration.overlays.allowURL = allowURL
            configuration.overlays.allowText = allowText
            configure(&configuration)
            defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
            try await withProxy(configuration) { proxy, runtime in try await body(proxy, base, origin, runtime) }
        }
    }

    @Test func anOverlayLandsWhereGravityAndOffsetsSayWithItsOpacity() async throws {
        try await withOverlays { proxy, base, _ in
            let url = ("url", base + "/base.png")
            let corner = try await proxy.image([url, ("format", "png"), ("wm", "corner")])
            #expect(corner.status == .ok, "\(corner.text)")
            let image = try VipsImage.decode(corner.bytes)
            #expect(image.width == 400 && image.height == 300 && image.bands == 3, "an opaque base stays without alpha")
            // southeast, 10 in from the right and 5 up from the bottom: x 350..389, y 275..294.
            for (x, y) in [(350, 275), (389, 294), (370, 285)] { #expect(try Self.rgb(image, x, y) == Self.pureRed, "(\(x),\(y))") }
            for (x, y) in [(349, 285), (390, 285), (370, 274), (370, 295), (395, 297), (10, 10)] {
                #expect(try Self.rgb(image, x, y) == Self.grey, "(\(x),\(y))")
            }

            let half = try VipsImage.decode(try await proxy.image([url, ("format", "png"), ("wm", "half")]).bytes)
            let blended = try Self.rgb(half, 5, 5)
            #expect(abs(blended[0] - 191) <= 2 && abs(blended[1] - 64) <= 2 && abs(blended[2] - 64) <= 2, "50% red over grey: \(blended)")
            #expect(try Self.rgb(half, 45, 5) == Self.grey)

            let wide = try VipsImage.decode(try await proxy.image([url, ("format", "png"), ("wm", "wide")]).bytes)
            // scale 0.5 of 400: 200x100, centred: x 100..299, y 100..199.
            #expect(try Self.rgb(wide, 102, 102) == Self.pureRed && Self.rgb(wide, 297, 197) == Self.pureRed)
            #expect(try Self.rgb(wide, 97, 150) == Self.grey && Self.rgb(wide, 200, 203) == Self.grey)

            let plain = try await proxy.image([url, ("format", "png")])
            #expect(plain.headers[.eTag] != corner.headers[.eTag], "an overlay is part of the variant")
        }
    }

    @Test func aTiledOverlayCoversTheImage() async throws {
        try await withOverlays { proxy, base, _ in
            let tiled = try await proxy.image([("url", base + "/base.png"), ("format", "png"), ("wm", "tiled")])
            let image = try VipsImage.decode(tiled.bytes)
            // 40x20 copies with 10 px gaps: cells of 50x30 from the top-left corner.
            var red = 0
            for cellX in stride(from: 0, to: 400, by: 50) {
                for cellY in stride(from: 0, to: 300, by: 30) {
                    if try Self.rgb(image, cellX + 20, cellY + 10) == Self.pureRed { red += 1 }
                    #expect(try Self.rgb(image, cellX + 45, cellY + 10) == Self.grey, "the horizontal gap")
                    #expect(try Self.rgb(image, cellX + 20, cellY + 25) == Self.grey, "the vertical gap")
                }
            }
            #expect(red == 8 * 10, "every cell has its copy")
        }
    }

    @Test func aNewOverlayImageMakesANewETag() async throws {
        try await withOverlays { proxy, base, origin in
            let query = [("url", base + "/base.png"), ("format", "png"), ("wm", "changing")]
            let first = try await proxy.image(query)
            #expect(try Self.rgb(VipsImage.decode(first.bytes), 5, 5) == Self.pureRed)
            #expect(try await proxy.image(query).headers[.eTag] == first.headers[.eTag], "the same overlay: the same variant")
            origin.replacements.set("/changing.png", .init(bytes: Self.blue, contentType: "image/png", headers: [("Cache-Control", "max-age=1")]))
            try await Task.sleep(for: .milliseconds(1_300))
            let second = try await proxy.image(query)
            #expect(second.status == .ok)
            #expect(second.headers[.eTag] != first.headers[.eTag], "the overlay's new image makes a new variant")
            #expect(try Self.rgb(VipsImage.decode(second.bytes), 5, 5) == [0, 0, 255])
        }
    }

    /// A watermark image is fresh for a day; its URL purged (or everything purged), the next variant draws
    /// its new image at once, and the variants that drew the old one are gone from memory and disk (#63).
    @Test func aPurgeOfAWatermarkImagesURLReachesItAndTheVariantsThatDrewIt() async throws {
        try await withOverlaysAndRuntime(configure: { $0.cache.adminToken = "wm-admin" }) { proxy, base, origin, runtime in
            let query = [("url", base + "/base.png"), ("format", "png"), ("wm", "purgeable")]
            let first = try await proxy.image(query)
            #expect(try Self.rgb(VipsImage.decode(first.bytes), 5, 5) == Self.pureRed)
            // A variant of the same base without the watermark: a purge of the watermark's URL leaves it.
            #expect(try await proxy.image([("url", base + "/base.png"), ("format", "png")]).status == .ok)
            let daily = [("Cache-Control", "max-age=86400")]
            origin.replacements.set("/purgeable.png", .init(bytes: Self.blue, contentType: "image/png", headers: daily))
            let held = try await proxy.image(query)
            #expect(held.headers[.eTag] == first.headers[.eTag], "fresh for a day: the old image until purged")

            await runtime.diskCache.waitForPendingWrites()
            let (memoryBefore, diskBefore) = (runtime.memoryCache.usage.entries, await runtime.diskCache.usage().entries)
            let admin: HTTPFields = [.authorization: "Bearer wm-admin"]
            let encoded = (base + "/purgeable.png").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let purge = try await proxy.execute(uri: "/cache?url=\(encoded)", method: .delete, headers: admin, body: nil)
            #expect(purge.status == .ok, "\(purge.text)")
            #expect(runtime.memoryCache.usage.entries == memoryBefore - 1, "the variant that drew it left memory; the other stayed")
            _ = diskBefore  // the disk side: CacheTierTests.purgesReachVariantsByTheirWatermarkImage
            let second = try await proxy.image(query)
            #expect(second.status == .ok && second.headers[.eTag] != first.headers[.eTag])
            #expect(try Self.rgb(VipsImage.decode(second.bytes), 5, 5) == [0, 0, 255], "the new image is drawn")

            origin.replacements.set("/purgeable.png", .init(bytes: Self.red, contentType: "image/png", headers: daily))
            let all = try await proxy.execute(uri: "/cache?all=1", method: .delete, headers: admin, body: nil)
            #expect(all.status == .ok)
            let third = try await proxy.image(query)
            #expect(try Self.rgb(VipsImage.decode(third.bytes), 5, 5) == Self.pureRed, "?all=1 drops watermark images too")
        }
    }

    @Test func everyFrameOfAnAnimationGetsTheOverlay() async throws {
        try await withOverlays { proxy, base, _ in
            let answer = try await proxy.image([("url", base + "/anim.gif"), ("format", "gif"), ("wm", "half")])
            #expect(answer.status == .ok && answer.headers[.contentType] == "image/gif", "\(answer.text)")
            let frames = try VipsImage.decodeAllFrames(answer.bytes)
            #expect(frames.frames == 4, "still animated")
            for frame in 0..<4 {
                let top = frame * frames.frameHeight
                let inside = try Self.rgb(frames, 5, top + 5), outside = try Self.rgb(frames, 60, top + 40)
                #expect(inside != outside, "frame \(frame): \(inside) vs \(outside)")
                #expect(inside[0] > outside[0] || outside[0] > 200, "frame \(frame) is reddened where the overlay is")
            }
        }
    }

    @Test func perRequestOverlaysAndBadOverlaysAnswerClearly() async throws {
        try await withOverlays { proxy, base, _ in
            let url = ("url", base + "/base.png")
            let off = try await proxy.image([url, ("wmurl", base + "/logo.png")])
            #expect(off.status == .badRequest && off.text.contains("'wmurl'") && off.text.contains("overlays.allowUrl"), "\(off.text)")
            let unknown = try await proxy.image([url, ("wm", "nope")])
            #expect(unknown.status == .badRequest && unknown.text.contains("unknown overlay 'nope'"))
            let missing = try await proxy.image([url, ("wm", "missing")])
            #expect(missing.status == .notFound && missing.text.contains("watermark image"), "\(missing.text)")
        }
        // Only 127.0.0.1 may be fetched: 127.0.0.2 (loopback, so a wrong answer connects nowhere else) is refused.
        try await withOverlays(allowURL: true, configure: { $0.fetch.allowlist = HostAllowlist(patterns: ["127.0.0.1"]) }) {
            proxy, base, _ in
            let url = ("url", base + "/base.png")
            let own = try await proxy.image([url, ("format", "png"), ("wmurl", base + "/logo.png")])
            #expect(own.status == .ok, "\(own.text)")
            #expect(try Self.rgb(VipsImage.decode(own.bytes), 399, 299) == Self.pureRed, "default placement: southeast, no offset")
            let placed = try await proxy.image([url, ("format", "png"), ("wm", "half"), ("wmurl", base + "/logo.png")])
            #expect(try Self.rgb(VipsImage.decode(placed.bytes), 5, 5)[1] == 64, "placed as the named overlay says")
            let notImage = try await proxy.image([url, ("wmurl", base + "/notimage.png")])
            #expect(notImage.status.code == 422 && notImage.text.contains("watermark image"), "\(notImage.text)")
            let refused = try await proxy.image([url, ("wmurl", base.replacingOccurrences(of: "127.0.0.1", with: "127.0.0.2") + "/logo.png")])
            #expect(refused.status == .forbidden && refused.text.contains("watermark image"), "the allowlist: \(refused.text)")
            let malformed = try await proxy.image([url, ("wmurl", "ftp://x/y.png")])
            #expect(malformed.status == .badRequest && malformed.text.contains("'wmurl'"))
        }
    }

    @Test func textIsDrawnLiterallyWithinItsBox() async throws {
        try await withOverlays(allowText: true) { proxy, base, _ in
            let url = ("url", base + "/base.png")
            let answer = try await proxy.image([
                url, ("format", "png"), ("text", "Hello <b>&</b>"), ("text_size", "32"), ("text_color", "ff0000"),
                ("text_g", "northwest"), ("text_x", "10"), ("text_y", "20"),
            ])
            #expect(answer.status == .ok, "\(answer.text)")
            let image = try VipsImage.decode(answer.bytes)
            let rgb = try Self.rgbReader(image)
            var inside = 0, outside = 0
            for y in stride(from: 0, to: 300, by: 2) {
                for x in stride(from: 0, to: 400, by: 2) {
                    let pixel = rgb(x, y)
                    guard pixel != Self.grey else { continue }
                    if (10..<400).contains(x) && (20..<(20 + 3 * 32)).contains(y) { inside += 1 } else { outside += 1 }
                }
            }
            #expect(inside > 50, "the text drew pixels: \(inside)")
            #expect(outside == 0, "nothing outside its box: \(outside)")
            // Markup is drawn as characters: the tags make the text wider than the bare word.
            let bare = try VipsImage.decode(try await proxy.image([
                url, ("format", "png"), ("text", "Hello &"), ("text_size", "32"), ("text_g", "northwest"),
            ]).bytes)
            func rightmost(_ image: VipsImage) throws -> Int {
                let rgb = try Self.rgbReader(image)
                var right = 0
                for x in stride(from: 0, to: 400, by: 2) {
                    for y in stride(from: 0, to: 60, by: 2) where rgb(x, y) != Self.grey { right = max(right, x) }
                }
                return right
            }
            #expect(try rightmost(image) > rightmost(bare) + 40)

            for (parameter, value, named) in [
                ("text", String(repeating: "x", count: 201), "'text'"), ("text", "a\u{1}b", "control"),
                ("text_size", "500", "'text_size'"), ("text_color", "red", "'text_color'"), ("text_g", "smart", "'text_g'"),
                ("text_opacity", "2", "'text_opacity'"), ("text_x", "-1", "'text_x'"),
            ] {
                let base = parameter == "text" ? [url] : [url, ("text", "hi")]
                let refused = try await proxy.image(base + [(parameter, value)])
                #expect(refused.status == .badRequest && refused.text.contains(named), "\(parameter)=\(value): \(refused.text)")
            }
            // Odd but valid text draws or is answered without a 5xx: blanks, line breaks only, emoji, right-to-left,
            // combining marks, a zero-width joiner, 100 lines (those below the output are not rendered).
            let lines = Array(repeating: "a", count: 100).joined(separator: "\n")
            for odd in [" ", "\n", "\n\n\n", "👩‍👩‍👧 🎉", "שלום עולם", "e\u{301}\u{301}\u{301}", "a\u{200D}b", lines] {
                let answer = try await proxy.image([url, ("w", "200"), ("format", "png"), ("text", odd), ("text_size", "200")])
                #expect(answer.status == .ok, "\(odd.unicodeScalars.map { String($0.value, radix: 16) }): \(answer.status) \(answer.text)")
            }
            // One 200-letter word at 200 px on a 200 px output wraps into 200 lines, more than Pango draws: a 422.
            let tall = try await proxy.image([url, ("w", "200"), ("text", String(repeating: "W", count: 200)), ("text_size", "200")])
            #expect(tall.status.code == 422 && tall.text.contains("text_size"), "\(tall.status) \(tall.text)")
            let stray = try await proxy.image([url, ("text_size", "20")])
            #expect(stray.status == .badRequest && stray.text.contains("needs text"))
        }
        try await withOverlays { proxy, base, _ in
            let off = try await proxy.image([("url", base + "/base.png"), ("text", "hi")])
            #expect(off.status == .badRequest && off.text.contains("overlays.allowText"))
        }
    }

    @Test func theFileDefinesOverlaysAndPresetsMayUseThem() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-overlays-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
            overlays:
              allowText: true
              font: DejaVu Serif
              logo: {source: "s3://brand/logo.png", gravity: northeast, x: 16, y: 8, opacity: 0.6, scale: 0.25, tile: false}
            presets:
              branded: "w=600&wm=logo"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let loaded = try await ProxyConfiguration.load(filePath: path, environment: [:])
        let logo = try #require(loaded.overlays.definitions["logo"])
        #expect(logo.source.absoluteString == "s3://brand/logo.png")
        #expect(logo.placement.gravity == .northeast && logo.placement.x == 16 && logo.placement.y == 8)
        #expect(logo.placement.opacity == 0.6 && logo.placement.scale == 0.25 && !logo.placement.tile)
        #expect(loaded.overlays.allowText && !loaded.overlays.allowURL && loaded.image.transformer.textFont == "DejaVu Serif")
        let request = try ImageRequest(
            query: [("url", "https://example.com/a.jpg"), ("preset", "branded")],
            limits: .init(maxDimension: 4096, presets: loaded.presets, overlays: loaded.overlays))
        #expect(request.watermark?.source == logo.source && request.width == 600)

        for (bad, named) in [
            ("overlays:\n  logo: {gravity: north}\n", "overlays.logo.source"),
            ("overlays:\n  logo: {source: \"https://x.example/l.png\", opacity: 2}\n", "overlays.logo.opacity"),
            ("overlays:\n  logo: {source: \"https://x.example/l.png\", gravity: smart}\n", "overlays.logo.gravity"),
            ("overlays:\n  logo: {source: \"https://x.example/l.png\", colour: red}\n", "overlays.logo.colour"),
            ("overlays:\n  Logo: {source: \"https://x.example/l.png\"}\n", "overlays.Logo"),
            ("presets:\n  branded: \"wm=nope\"\n", "presets.branded"),
            ("overlays:\n  font: \"x;y\"\n", "overlays.font"),
        ] {
            try bad.write(toFile: path, atomically: true, encoding: .utf8)
            await #expect {
                _ = try await ProxyConfiguration.load(filePath: path, environment: [:])
            } throws: { error in
                "\(error)".contains(named)
            }
        }
    }
}
