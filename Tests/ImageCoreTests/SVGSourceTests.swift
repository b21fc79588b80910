import CVipsShim
import Foundation
import Testing
import TestSupport

@testable import ImageCore

/// SVG in, pixels out (issue #62): an SVG source is drawn by librsvg at the size the output needs, never
/// answered as SVG, and refused by name when it refers to anything outside itself, declares entities, uses
/// XInclude, or would cost more than the limits allow; nothing it names is read or fetched.
@Suite(.serialized) struct SVGSourceTests {
    static func request(_ query: [(String, String)]) throws -> ImageRequest {
        try ImageRequest(query: [("url", "https://example.com/logo.svg")] + query, limits: .init(maxDimension: 4096))
    }

    static var transformer: ImageTransformer {
        var settings = ImageTransformer.Settings()
        settings.allowSVGInput = true
        return ImageTransformer(settings: settings)
    }

    /// A 100x50 logo: transparent left half, an opaque black right half (an edge at x = 50).
    static let halfLogo = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 50" width="100" height="50">
          <rect x="50" y="0" width="50" height="50" fill="#000"/>
        </svg>
        """.utf8)

    static func svg(_ body: String, attributes: String = "width=\"100\" height=\"100\"") -> [UInt8] {
        Array("""
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" \(attributes)>\(body)</svg>
            """.utf8)
    }

    /// The estimate in the ``ImagingError/tooExpensive(estimateMilliseconds:limitMilliseconds:)`` that
    /// `plan` throws; nil when it plans or throws something else.
    static func refusedEstimate(_ plan: () throws -> TransformPlan) -> Int? {
        do {
            _ = try plan()
            return nil
        } catch ImagingError.tooExpensive(let estimate, _) {
            return estimate
        } catch {
            return nil
        }
    }

    /// The alpha of the pixel at (`x`, `y`) of an RGBA image.
    static func alpha(_ image: ImageCore.VipsImage, x: Int, y: Int) throws -> UInt8 {
        let pixels = try image.pixels()
        return pixels[(y * image.width + x) * image.bands + image.bands - 1]
    }

    @Test func anSVGIsRecognisedByItsTextAndOtherXMLIsNot() {
        #expect(SourceFormat(sniffing: Self.halfLogo) == .svg)
        let marked = [0xEF, 0xBB, 0xBF] + Array("\n  <!-- made by an editor -->\n<!DOCTYPE svg>\n<svg/>".utf8)
        #expect(SourceFormat(sniffing: marked) == .svg, "a byte-order mark, white space, a comment and a DOCTYPE first")
        #expect(SourceFormat(sniffing: Array("<html><body>no image</body></html>".utf8)) == nil)
        #expect(SourceFormat(sniffing: Array("just text <svg".utf8)) == nil, "text that does not start with markup")
    }

    @Test func anSVGIsDrawnAtTheOutputsSizeSharpWhenItGrows() throws {
        let transformer = Self.transformer
        let small = try transformer.transform(Self.halfLogo, request: Self.request([("w", "64")]), choice: .source)
        #expect(small.format == .png && small.width == 64 && small.height == 32, "format=source is PNG for SVG")
        // 20 times the declared size without `enlarge`: drawn at 2000 px, so the edge at x = 1000 stays one pixel
        // wide (a 100 px raster enlarged 20x spreads it over tens of pixels).
        let large = try transformer.transform(Self.halfLogo, request: Self.request([("w", "2000"), ("format", "png")]), choice: .fixed(.png))
        #expect(large.width == 2000 && large.height == 1000)
        let decoded = try ImageCore.VipsImage.decode(large.bytes)
        #expect(decoded.hasAlpha)
        let (outside, inside) = (try Self.alpha(decoded, x: 997, y: 500), try Self.alpha(decoded, x: 1002, y: 500))
        #expect(outside == 0 && inside == 255, "the edge is sharp: alpha \(outside) and \(inside) either side")
        // A cover crop draws at the scale of the side that needs more pixels.
        let cover = try transformer.transform(
            Self.halfLogo, request: Self.request([("w", "300"), ("h", "300"), ("fit", "cover")]), choice: .fixed(.png))
        #expect(cover.width == 300 && cover.height == 300)
    }

    @Test func aNegotiatedAVIFBecomesWebPAndAnEmbeddedRasterIsDrawn() throws {
        let transformer = Self.transformer
        let negotiated = try transformer.transform(Self.halfLogo, request: Self.request([("w", "80")]), choice: .fixed(.avif))
        #expect(negotiated.format == .webp)
        let asked = try transformer.transform(Self.halfLogo, request: Self.request([("w", "80"), ("format", "avif")]), choice: .fixed(.avif))
        #expect(asked.format == .avif, "an AVIF asked for by name is kept")
        let red = try TestImages.solid(width: 8, height: 8, red: 255, green: 0, blue: 0).encoded(as: .png).bytes
        let embedded = Self.svg(
            "<image width=\"100\" height=\"100\" preserveAspectRatio=\"none\" xlink:href=\"data:image/png;base64,\(Data(red).base64EncodedString())\"/>"
                + "<a href=\"https://example.com/\"><text x=\"1\" y=\"9\">link</text></a>")
        let output = try transformer.transform(embedded, request: Self.request([("w", "50"), ("format", "png")]), choice: .fixed(.png))
        let pixels = try ImageCore.VipsImage.decode(output.bytes).pixels()
        #expect(pixels[(40 * 50 + 40) * 4] == 255 && pixels[(40 * 50 + 40) * 4 + 1] == 0, "the embedded PNG is drawn")
    }

    @Test func referencesOutsideTheDocumentEntitiesAndXIncludeAreRefusedByName() throws {
        let transformer = Self.transformer
        let cases: [(String, [UInt8], SVGRefusal)] = [
            ("a file", Self.svg("<image width=\"10\" height=\"10\" xlink:href=\"file:///etc/hostname\"/>"), .externalReference),
            ("a relative path", Self.svg("<image width=\"10\" height=\"10\" href=\"logo.png\"/>"), .externalReference),
            ("a loopback URL", Self.svg("<image width=\"10\" height=\"10\" href=\"http://127.0.0.1:9/x.png\"/>"), .externalReference),
            ("another SVG as data", Self.svg("<image width=\"10\" height=\"10\" href=\"data:image/svg+xml;base64,PHN2Zy8+\"/>"), .externalReference),
            ("a paint server elsewhere", Self.svg("<rect width=\"9\" height=\"9\" fill=\"url(http://127.0.0.1:9/g.svg#g)\"/>"), .externalReference),
            ("a use elsewhere", Self.svg("<use xlink:href=\"other.svg#a\"/>"), .externalReference),
            ("CSS @import", Self.svg("<style>@import url(\"https://example.com/a.css\");</style>"), .externalReference),
            ("a style url()", Self.svg("<rect width=\"9\" height=\"9\" style=\"fill: url( 'x.svg#g' )\"/>"), .externalReference),
            ("a stylesheet instruction", Array("<?xml-stylesheet href=\"a.css\"?>".utf8) + Self.svg(""), .externalReference),
            ("XInclude", Self.svg("<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" href=\"/etc/hostname\" parse=\"text\"/>"), .xInclude),
            ("a SYSTEM entity", Array("<?xml version=\"1.0\"?><!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/hostname\">]>".utf8)
                + Self.svg("<text>&x;</text>"), .entity),
            ("entity expansion", Array("<!DOCTYPE svg [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>".utf8)
                + Self.svg("<text>&b;</text>"), .entity),
            ("not an svg root", Array("<?xml version=\"1.0\"?><!-- <svg --><html/>".utf8), .notSVG),
            ("not well-formed", Array("<svg xmlns=\"http://www.w3.org/2000/svg\"><g></svg>".utf8), .notXML),
            ("too many elements", Self.svg(String(repeating: "<g/>", count: Int(IPX_SVG_MAX_ELEMENTS))), .tooComplex),
        ]
        for (name, bytes, refusal) in cases {
            #expect(SourceFormat(sniffing: bytes) == .svg, "\(name) is sniffed as SVG")
            #expect(throws: ImagingError.unsafeSVG(refusal), "\(name)") {
                try transformer.transform(bytes, request: Self.request([("w", "50")]), choice: .fixed(.png))
            }
        }
        // A fragment reference, a gradient and an <a> link pass.
        let local = Self.svg(
            "<defs><linearGradient id=\"g\"><stop offset=\"0\" stop-color=\"#f00\"/></linearGradient><rect id=\"r\" width=\"9\" height=\"9\"/></defs>"
                + "<use xlink:href=\"#r\" fill=\"url(#g)\"/><a xlink:href=\"https://example.com/\"><rect width=\"1\" height=\"1\"/></a>")
        #expect(try transformer.transform(local, request: Self.request([("w", "50")]), choice: .fixed(.png)).width == 50)
    }

    /// Below the check: librsvg itself, given the bytes without a base file, reads no file and connects to no
    /// address an SVG names, so that the check is a second wall and not the only one.
    @Test func librsvgAloneReadsNoFileAndFetchesNothing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("svg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let red = folder.appendingPathComponent("red.png")
        try Data(try TestImages.solid(width: 10, height: 10, red: 255, green: 0, blue: 0).encoded(as: .png).bytes).write(to: red)
        let listener = try LoopbackListener()
        defer { listener.close() }
        let bytes = Self.svg(
            "<image width=\"100\" height=\"50\" xlink:href=\"file://\(red.path)\"/>"
                + "<image y=\"50\" width=\"100\" height=\"50\" xlink:href=\"http://127.0.0.1:\(listener.port)/red.png\"/>"
                + "<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" href=\"http://127.0.0.1:\(listener.port)/t\" parse=\"text\"/>")
        Vips.allowSVGInput()
        let image = try ScaleOnLoadStep.renderSVG(bytes, scale: 1, deadline: nil)
        let pixels = try image.pixels()
        #expect(image.width == 100 && image.height == 100 && image.bands == 4)
        #expect(pixels.allSatisfy { $0 == 0 }, "nothing drawn from the file or the URL")
        #expect(listener.pendingConnections() == 0, "no connection to the loopback URL")
    }

    @Test func theDrawnSizeAndTheFiltersAreBoundedBeforeAnyWork() throws {
        var settings = ImageTransformer.Settings()
        settings.allowSVGInput = true
        settings.maxSourcePixels = 4_000_000
        settings.maxTransformCpuMilliseconds = 5_000
        let transformer = ImageTransformer(settings: settings)
        // Declared at 100000x100000: drawn at 64 px, it passes; at its declared size it is far over the limit.
        let huge = Self.svg("<rect width=\"100000\" height=\"100000\" fill=\"#08f\"/>", attributes: "width=\"100000\" height=\"100000\"")
        let icon = try transformer.transform(huge, request: Self.request([("w", "64")]), choice: .fixed(.png))
        #expect(icon.width == 64 && icon.height == 64)
        #expect(throws: ImagingError.tooManyPixels(limit: 4_000_000)) {
            try transformer.plan(huge, request: Self.request([]), choice: .fixed(.png))
        }
        // Twenty full-canvas blurs instanced by two hundred <use>s: the estimate refuses it before drawing.
        let blurs = Self.svg(
            "<defs><filter id=\"f\"><feGaussianBlur stdDeviation=\"50\"/></filter>"
                + (0..<20).map { "<rect id=\"r\($0)\" width=\"2000\" height=\"2000\" fill=\"red\" filter=\"url(#f)\"/>" }.joined()
                + "</defs>" + (0..<200).map { "<use xlink:href=\"#r\($0 % 20)\"/>" }.joined(),
            attributes: "width=\"2000\" height=\"2000\"")
        let blurEstimate = Self.refusedEstimate { try transformer.plan(blurs, request: Self.request([("w", "2000")]), choice: .fixed(.png)) }
        #expect((blurEstimate ?? 0) > 5_000, "the filter bomb is refused as too expensive: \(String(describing: blurEstimate)) ms")
        // Nineteen thousand masked canvases (each drawn through a surface of its own): refused the same way.
        let masks = Self.svg(
            "<mask id=\"m\"><rect width=\"1000\" height=\"1000\" fill=\"#fff\"/></mask>"
                + String(repeating: "<rect width=\"1000\" height=\"1000\" fill=\"red\" mask=\"url(#m)\"/>", count: 19_000),
            attributes: "width=\"1000\" height=\"1000\"")
        let maskEstimate = Self.refusedEstimate { try transformer.plan(masks, request: Self.request([("w", "1000")]), choice: .fixed(.png)) }
        #expect((maskEstimate ?? 0) > 60_000, "19,000 masks over a megapixel: about 76 s: \(String(describing: maskEstimate)) ms")
        let masksHeader = try SourceHeader(reading: masks)
        #expect(masksHeader.svgSurfaces == 19_000 && masksHeader.svgFilterRenders == 0)
        // The same document as a 64 px icon is cheap enough to draw.
        #expect(try transformer.plan(blurs, request: Self.request([("w", "64")]), choice: .fixed(.png)).box.width == 64)
    }

    @Test func svgSourcesAreRefusedUnlessEnabledAndInfoSaysSVG() throws {
        let off = ImageTransformer(settings: ImageTransformer.Settings())
        #expect(throws: ImagingError.formatDisabled(format: "SVG", key: "image.allowSVGInput")) {
            try off.transform(Self.halfLogo, request: Self.request([("w", "64")]), choice: .fixed(.png))
        }
        #expect(throws: ImagingError.formatDisabled(format: "SVG", key: "image.allowSVGInput")) {
            try ImageInfo(source: Self.halfLogo, maxSourcePixels: 1_000_000)
        }
        let info = try ImageInfo(source: Self.halfLogo, maxSourcePixels: 1_000_000, allowSVG: true)
        #expect(info.format == "svg" && info.width == 100 && info.height == 50 && info.hasAlpha)
    }
}
