import Foundation
import Testing

@testable import ImageCore

/// imgproxy URLs turned into native requests: each must parse into the very request its native twin
/// parses into (one variant), and every option the engine cannot honour must be a 400 naming it.
@Suite struct ImgproxyURLTests {
    private let limits = ImageRequest.Limits(maxDimension: 4096)
    private static let source = "http://127.0.0.1:8/photos/cat.jpg"
    private static let encoded = Data(source.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")

    private func request(_ target: String, choices: ImgproxyURL.Choices = .init()) throws -> ImageRequest {
        try ImgproxyURL(target: target).translated(choices: choices).parsed(limits: limits)
    }

    private func native(_ pairs: [(String, String)]) throws -> ImageRequest {
        try nativeTwin(of: Self.source, pairs, limits: limits)
    }

    @Test func plainAndBase64SourcesWithTheirExtensions() throws {
        let plain = try ImgproxyURL(target: "/insecure/rs:fit:300:200/plain/\(Self.source)@webp")
        #expect(plain.signature == "insecure" && plain.source == Self.source && plain.sourceExtension == "webp")
        #expect(plain.signedPath == "/rs:fit:300:200/plain/\(Self.source)@webp")
        let escaped = try ImgproxyURL(
            target: "/x/w:10/plain/" + Self.source.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        #expect(escaped.source == Self.source && escaped.sourceExtension == nil)
        let withQuery = try ImgproxyURL(target: "/x/w:10/plain/http://127.0.0.1:8/a.jpg?v=2&x=1@png")
        #expect(withQuery.source == "http://127.0.0.1:8/a.jpg?v=2&x=1" && withQuery.sourceExtension == "png")
        // The base64 form, split by slashes as imgproxy allows, with and without its extension.
        let split = Self.encoded.enumerated().map { $0.offset > 0 && $0.offset % 16 == 0 ? "/\($0.element)" : "\($0.element)" }.joined()
        let base64 = try ImgproxyURL(target: "/sig/rs:fill:100:100/\(split).png")
        #expect(base64.source == Self.source && base64.sourceExtension == "png" && base64.options.count == 1)
        #expect(try ImgproxyURL(target: "/sig/\(Self.encoded)").source == Self.source)
        #expect(try request("/sig/rs:fill:100:100/\(split).png") == native([("w", "100"), ("h", "100"), ("fit", "cover"), ("format", "png")]))
    }

    @Test func resizingTypesAndMetaOptionsMeanTheirNativeTwins() throws {
        let cases: [(String, [(String, String)])] = [
            ("rs:fit:300:200", [("w", "300"), ("h", "200")]),
            ("rs:fill:300:200:1", [("w", "300"), ("h", "200"), ("fit", "cover"), ("enlarge", "1")]),
            ("rs:fill-down:300:200", [("w", "300"), ("h", "200"), ("fit", "cover")]),
            ("rs:force:300:200", [("w", "300"), ("h", "200"), ("fit", "fill")]),
            ("rs:auto:300:200", [("w", "300"), ("h", "200"), ("fit", "auto")]),
            ("rs:fit:300:200:0:1", [("w", "300"), ("h", "200"), ("fit", "pad")]),
            ("s:300:0/rt:fill", [("w", "300"), ("fit", "cover")]),
            ("width:300/height:200/resizing_type:force/enlarge:t", [("w", "300"), ("h", "200"), ("fit", "fill"), ("enlarge", "1")]),
            ("w:300/dpr:2", [("w", "300"), ("dpr", "2")]),
            ("rs:fill:300:200/g:noea", [("w", "300"), ("h", "200"), ("fit", "cover"), ("g", "northeast")]),
            ("rs:fill:300:200/gravity:sm", [("w", "300"), ("h", "200"), ("fit", "cover"), ("g", "smart")]),
            ("rs:fill:300:200/g:obj:face", [("w", "300"), ("h", "200"), ("fit", "cover"), ("g", "face")]),
            ("rs:fill:300:200/g:fp:0.25:0.75", [("w", "300"), ("h", "200"), ("fit", "cover"), ("fp", "0.25,0.75")]),
            ("w:300/q:70/f:webp", [("w", "300"), ("q", "70"), ("format", "webp")]),
            ("w:300/ext:png/fq:png:40:webp:70", [("w", "300"), ("format", "png"), ("q", "40")]),
            ("w:300/mb:20000/format:jpg", [("w", "300"), ("max_bytes", "20000"), ("format", "jpg")]),
            ("w:300/bl:2/sh:0.5/rot:90/t:10", [("h", "300"), ("filter", "trim,rotate:90,blur:2,sharpen:0.5")]),
            ("rs:fill:300:200/rot:180", [("w", "300"), ("h", "200"), ("fit", "cover"), ("filter", "rotate:180")]),
            ("w:300/bg:255:0:16", [("w", "300"), ("bg", "ff0010")]),
            ("w:300/background:FF0010", [("w", "300"), ("bg", "ff0010")]),
            ("c:0.5:0.25:nowe/w:300", [("w", "300"), ("crop", "0.000000,0.000000,0.500000,0.250000")]),
            ("c:0.5:0.5/g:soea/w:300", [("w", "300"), ("g", "southeast"), ("crop", "0.500000,0.500000,0.500000,0.500000")]),
            ("w:300/ar:1/sm:1/cb:v42/q:0/mb:0/bl:0", [("w", "300")]),
        ]
        for (options, pairs) in cases {
            #expect(try request("/insecure/\(options)/plain/\(Self.source)") == native(pairs), "\(options)")
        }
        // The extension gives the format unless an option does.
        #expect(try request("/insecure/w:300/plain/\(Self.source)@avif") == native([("w", "300"), ("format", "avif")]))
        #expect(try request("/insecure/w:300/f:png/plain/\(Self.source)@avif") == native([("w", "300"), ("format", "png")]))
        // Later options win, as in imgproxy.
        #expect(try request("/insecure/w:100/rs:fit:300/plain/\(Self.source)") == native([("w", "300")]))
    }

    @Test func responseOptionsPresetsAndTheWatermarkOverlay() throws {
        let dialect = try ImgproxyURL(target: "/x/fn:holiday:0/att:1/exp:1700000000/pr:thumb:webp/plain/\(Self.source)").translated()
        #expect(dialect.filename == "holiday" && dialect.attachment && dialect.expires == 1_700_000_000)
        #expect(dialect.value(of: "preset") == "thumb,webp")
        let encodedName = try ImgproxyURL(target: "/x/fn:aMOpbGxv:1/plain/\(Self.source)").translated()
        #expect(encodedName.filename == "héllo")
        let marked = try ImgproxyURL(target: "/x/wm:1/plain/\(Self.source)").translated(choices: .init(watermarkOverlay: "logo"))
        #expect(marked.value(of: "wm") == "logo")
        #expect(try ImgproxyURL(target: "/x/wm:0/plain/\(Self.source)").translated().value(of: "wm") == nil)
    }

    @Test func optionsTheEngineCannotHonourAreRefusedByName() {
        let refusals: [(String, String)] = [
            ("pd:10", "pd"), ("min-width:100", "min-width"), ("zoom:2", "zoom"), ("g:no:10:0", "g"), ("c:300:200", "c"),
            ("rs:fill:300:200:0:1", "rs"), ("t:20", "t"), ("ar:0", "ar"), ("sm:false", "sm"), ("wm:0.5", "wm"), ("wm:1", "wm"),
            ("rot:45", "rot"), ("rot:90/g:no", "rot"), ("rot:270/c:0.5:0.5", "rot"), ("fq:webp:70", "fq"), ("bogus:1", "bogus"), ("el:maybe", "el"), ("rs:stretch:1:1", "rs"),
            ("w:abc", "w"), ("w:5000", "w"), ("dpr:9", "dpr"), ("mb:10", "mb"), ("f:tiff", "f"), ("bl:500", "bl"),
            ("rs:fit:99999999999:1", "rs"), ("g:obj:cat", "g"), ("g:obj:face:dog", "g"),
        ]
        for (options, name) in refusals {
            #expect(throws: RequestError.self, "\(options)") { try request("/insecure/\(options)/plain/\(Self.source)") }
            do {
                _ = try request("/insecure/\(options)/plain/\(Self.source)")
            } catch let error as RequestError {
                #expect(error.parameter == name, "\(options): \(error.publicMessage)")
            } catch {
                Issue.record("\(options): \(error)")
            }
        }
        for malformed in ["", "/", "/sig", "/sig/w:1", "/sig/w:1/!!!notbase64", "/sig/w:1/plain/", "/sig/w:1/plain/%zz"] {
            #expect(throws: RequestError.self, "\(malformed)") { try ImgproxyURL(target: malformed) }
        }
    }

    @Test func randomTargetsNeverTrap() {
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("/:plain@.-_%0123456789abcxyzrsfitwhgqTF=?&")
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...60, using: &random)
            let target = String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            if let url = try? ImgproxyURL(target: target), let dialect = try? url.translated(choices: .init(watermarkOverlay: "logo")) {
                _ = try? ImageRequest(query: dialect.query, limits: limits)
            }
        }
    }
}
