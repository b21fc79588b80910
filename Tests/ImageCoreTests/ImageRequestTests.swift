import Testing

@testable import ImageCore

@Suite struct ImageRequestTests {
    private let limits = ImageRequest.Limits(maxDimension: 4096)

    private func parse(_ pairs: [(String, String)]) throws -> ImageRequest {
        try ImageRequest(query: pairs.map { (name: $0.0, value: $0.1) }, limits: limits)
    }

    @Test func parsesEveryParameter() throws {
        let request = try parse([
            ("url", "https://Example.COM:443/a/b.jpg?x=1#frag"), ("w", "300"), ("h", "200"), ("fit", "cover"),
            ("format", "webp"), ("q", "70"), ("dpr", "2"), ("filter", "blur:2,sharpen,grayscale"), ("enlarge", "1"),
        ])
        #expect(request.source.absoluteString == "https://example.com/a/b.jpg?x=1")
        #expect(request.source.host == "example.com")
        #expect(request.width == 600 && request.height == 400)
        #expect(request.fit == .cover)
        #expect(request.format == .fixed(.webp))
        #expect(request.quality == 70)
        #expect(request.enlarge)
        #expect(request.filters == [.blur(sigma: 2), .sharpen(sigma: 1), .grayscale])
    }

    @Test func dprIsClampedToTheMaximumDimension() throws {
        #expect(try parse([("url", "http://a.example/x"), ("w", "4000"), ("dpr", "2")]).width == 4096)
    }

    @Test func equivalentSpellingsShareAVariantKey() throws {
        let first = try parse([("url", "HTTP://A.example:80/x.jpg"), ("w", "100")])
        let second = try parse([("w", "100"), ("url", "http://a.example/x.jpg")])
        #expect(first.variantKey(choice: .jpegOrPNG) == second.variantKey(choice: .jpegOrPNG))
        let wider = try parse([("url", "http://a.example/x.jpg"), ("w", "101")])
        #expect(first.variantKey(choice: .jpegOrPNG) != wider.variantKey(choice: .jpegOrPNG))
        #expect(first.variantKey(choice: .jpegOrPNG) != first.variantKey(choice: .fixed(.webp)))
        #expect(first.variantKey(choice: .jpegOrPNG).hex.count == 64)
    }

    @Test func negotiatesFormatFromAccept() throws {
        let auto = try parse([("url", "http://a.example/x.jpg")])
        #expect(auto.formatChoice(accept: "image/webp,*/*", allowAVIF: false) == (.fixed(.webp), true))
        #expect(auto.formatChoice(accept: "image/avif,image/webp", allowAVIF: true) == (.fixed(.avif), true))
        #expect(auto.formatChoice(accept: "image/avif,image/webp", allowAVIF: false) == (.fixed(.webp), true))
        #expect(auto.formatChoice(accept: "image/webp;q=0, */*", allowAVIF: false) == (.jpegOrPNG, true))
        #expect(auto.formatChoice(accept: nil, allowAVIF: true) == (.jpegOrPNG, true))
        let fixed = try parse([("url", "http://a.example/x.jpg"), ("format", "png")])
        #expect(fixed.formatChoice(accept: "image/webp", allowAVIF: true) == (.fixed(.png), false))
    }

    @Test func rejectsBadInputNamingTheParameter() {
        let cases: [([(String, String)], String)] = [
            ([], "url"),
            ([("url", "")], "url"),
            ([("url", "file:///etc/passwd")], "url"),
            ([("url", "http://")], "url"),
            ([("url", "http://u@a.example/x")], "url"),
            ([("url", "http://a.example/x"), ("url", "http://b.example/x")], "url"),
            ([("url", "http://a.example/x"), ("width", "3")], "width"),
            ([("url", "http://a.example/x"), ("w", "1.5")], "w"),
            ([("url", "http://a.example/x"), ("dpr", "0.5")], "dpr"),
            ([("url", "http://a.example/x"), ("dpr", "nan")], "dpr"),
            ([("url", "http://a.example/x"), ("filter", "")], "filter"),
            ([("url", "http://a.example/x"), ("filter", "blur:0")], "filter"),
            ([("url", "http://a.example/x"), ("filter", "grayscale:1")], "filter"),
            ([("url", "http://a.example/x"), ("filter", "blur:1,")], "filter"),
        ]
        for (pairs, parameter) in cases {
            do {
                _ = try parse(pairs)
                Issue.record("\(pairs) was accepted")
            } catch let error as RequestError {
                #expect(error.parameter == parameter, "\(pairs): \(error)")
                #expect(error.kind == .invalidRequest)
            } catch {
                Issue.record("\(pairs): unexpected \(error)")
            }
        }
    }
}
