import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

/// Faces (issue #62) on real photographs: OpenCV's cascade finds the astronaut's face where it is and none
/// in a photograph of a cup; `g=face` keeps the face in a crop where libvips' attention loses it; a redacted
/// face differs strongly from the source while the rest of the image does not.
@Suite(.serialized) struct FaceTests {
    static func request(_ query: [(String, String)]) throws -> ImageRequest {
        try ImageRequest(query: [("url", "https://example.com/p.jpg")] + query, limits: .init(maxDimension: 4096))
    }

    static let transformer = ImageTransformer(settings: ImageTransformer.Settings())

    /// The astronaut's face, measured by eye on the 512x512 photograph: x 175-270, y 75-185.
    static let knownFace = (x: 175.0...270.0, y: 75.0...185.0)

    /// The mean absolute difference of two RGB(A) images of the same size inside (or outside) a rectangle.
    static func meanDifference(
        _ a: [UInt8], _ b: [UInt8], width: Int, bands: Int, inside rectangle: (x: Int, y: Int, width: Int, height: Int), outside: Bool = false
    ) -> Double {
        var total = 0, count = 0
        for index in stride(from: 0, to: min(a.count, b.count), by: bands) {
            let x = (index / bands) % width, y = (index / bands) / width
            let within = x >= rectangle.x && x < rectangle.x + rectangle.width && y >= rectangle.y && y < rectangle.y + rectangle.height
            guard within != outside else { continue }
            for band in 0..<min(3, bands) { total += abs(Int(a[index + band]) - Int(b[index + band])) }
            count += min(3, bands)
        }
        return count == 0 ? 0 : Double(total) / Double(count)
    }

    @Test func theAstronautsFaceIsFoundWhereItIsAndTheCupHasNone() throws {
        let portrait = try Photographs.astronaut()
        let search = try Self.transformer.faceSearch(portrait)
        #expect(search.width == 512 && search.height == 512)
        #expect(search.faces.count == 1, "\(search.faces)")
        let face = try #require(search.faces.first)
        let centre = (x: face.centre.x * 512, y: face.centre.y * 512)
        #expect(Self.knownFace.x.contains(centre.x) && Self.knownFace.y.contains(centre.y), "centre \(centre)")
        #expect(face.width * 512 > 60 && face.width * 512 < 200, "a face's size, not the whole picture: \(face.width * 512) px")
        #expect(try Self.transformer.faceSearch(Photographs.coffee()).faces.isEmpty)
    }

    /// Strips of the portrait: libvips' attention puts a wide one on the suit's patch and a tall one on the
    /// model shuttle; `g=face` keeps the face in both.
    @Test(arguments: [(400, 100), (100, 400)])
    func aFaceCropKeepsTheFaceWhereAttentionLosesIt(width: Int, height: Int) throws {
        let portrait = try Photographs.astronaut()
        let box = [("w", "\(width)"), ("h", "\(height)"), ("fit", "cover"), ("format", "png")]
        let smart = try Self.transformer.transform(portrait, request: Self.request(box + [("g", "smart")]), choice: .fixed(.png))
        #expect(try FaceDetector.faces(in: ImageCore.VipsImage.decode(smart.bytes)).isEmpty, "attention crops elsewhere")
        let request = try Self.request(box + [("g", "face")])
        #expect(request.cropsAroundFaces(smartFaces: false))
        let anchored = request.anchored(on: try Self.transformer.faceSearch(portrait))
        let point = try #require(anchored.focalPoint)
        #expect(Self.knownFace.x.contains(point.x * 512) && Self.knownFace.y.contains(point.y * 512), "centred on the face: \(point)")
        let face = try Self.transformer.transform(portrait, request: anchored, choice: .fixed(.png))
        #expect(face.width == width && face.height == height)
        #expect(try FaceDetector.faces(in: ImageCore.VipsImage.decode(face.bytes)).count == 1, "the face is in the crop")
        // With image.smartFaces, g=smart does the same; without faces, g=face is g=smart.
        #expect(try Self.request(box + [("g", "smart")]).cropsAroundFaces(smartFaces: true))
        #expect(request.anchored(on: FaceSearch(faces: [], width: 512, height: 512)).gravity == .smart)
    }

    @Test func allFacesAreKeptWhenTheyFitElseTheLargest() throws {
        let request = try Self.request([("w", "400"), ("h", "400"), ("fit", "cover"), ("g", "face")])
        let left = FaceBox(x: 0.05, y: 0.2, width: 0.1, height: 0.2), right = FaceBox(x: 0.25, y: 0.3, width: 0.08, height: 0.16)
        // A 2000x1000 source, a square crop: half the width. Both faces fit (0.05...0.33): centred on both.
        let both = request.anchored(on: FaceSearch(faces: [left, right], width: 2000, height: 1000))
        #expect(abs((both.focalPoint?.x ?? 0) - 0.19) < 1e-9 && abs((both.focalPoint?.y ?? 0) - 0.33) < 1e-9)
        // A face at the far right too: they cannot all fit, so the largest is kept.
        let far = FaceBox(x: 0.9, y: 0.3, width: 0.05, height: 0.1)
        let largest = request.anchored(on: FaceSearch(faces: [left, right, far], width: 2000, height: 1000))
        #expect(abs((largest.focalPoint?.x ?? 0) - 0.1) < 1e-9 && abs((largest.focalPoint?.y ?? 0) - 0.3) < 1e-9)
    }

    @Test(arguments: [FaceRedaction.blur, .pixelate])
    func aRedactedFaceDiffersStronglyAndTheRestDoesNot(style: FaceRedaction) throws {
        let portrait = try Photographs.astronaut()
        let plain = try Self.transformer.transform(portrait, request: Self.request([("w", "400"), ("format", "png")]), choice: .fixed(.png))
        let redacted = try Self.transformer.transform(
            portrait, request: Self.request([("w", "400"), ("format", "png"), ("filter", "redact_faces:\(style.rawValue)")]),
            choice: .fixed(.png))
        let before = try ImageCore.VipsImage.decode(plain.bytes), after = try ImageCore.VipsImage.decode(redacted.bytes)
        #expect(after.width == 400 && after.height == 400)
        // The face as the detector sees it in the output, and that region grown as the redaction grows it.
        let face = try #require(try FaceDetector.faces(in: before).first)
        let region = face.pixels(width: 400, height: 400, margin: FaceRedactionStep.margin)
        let (a, b) = (try before.pixels(), try after.pixels())
        let inside = Self.meanDifference(a, b, width: 400, bands: before.bands, inside: face.pixels(width: 400, height: 400))
        let outside = Self.meanDifference(a, b, width: 400, bands: before.bands, inside: region, outside: true)
        #expect(inside > 12, "the face changed strongly: \(inside) levels")
        #expect(outside < 0.5, "the rest is as it was: \(outside) levels")
        #expect(try FaceDetector.faces(in: after).isEmpty, "no face is found in the redacted output")
    }

    @Test func redactionIsReservedAndNamedInTheVariantKey() throws {
        let with = try Self.request([("w", "400"), ("filter", "redact_faces:pixelate")])
        let without = try Self.request([("w", "400")])
        #expect(with.variantKey(choice: .fixed(.jpeg)) != without.variantKey(choice: .fixed(.jpeg)))
        #expect(with.filters == [.redactFaces(.pixelate)])
        #expect(try Self.request([("filter", "redact_faces")]).filters == [.redactFaces(.blur)])
        #expect(throws: RequestError.self) { try Self.request([("filter", "redact_faces:mosaic")]) }
        // g=face anchors a crop, not an overlay.
        #expect(throws: RequestError.self) { try ImageRequest.overlayGravity("face", parameter: "text_g") }
        let portrait = try Photographs.astronaut()
        let planWith = try Self.transformer.plan(portrait, request: with, choice: .fixed(.jpeg))
        let planWithout = try Self.transformer.plan(portrait, request: without, choice: .fixed(.jpeg))
        #expect(planWith.fullReservation - planWithout.fullReservation == FaceDetector.workingSetBytes)
    }
}
