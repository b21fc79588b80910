import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// `Last-Modified` and `Content-Disposition`, as image peers send them.
@Suite(.timeLimit(.minutes(2))) struct ResponseHeaderTests {
    @Test func lastModifiedIsTheOriginsOrWhenTheVariantWasMade() async throws {
        let photo = try TestImages.jpeg(width: 320, height: 240)
        let stamp = "Wed, 21 Oct 2015 07:28:00 GMT"
        try await withFixtures([
            "/dated.jpg": .jpeg(photo, headers: [("Last-Modified", stamp)]), "/plain.jpg": .jpeg(photo),
            "/odd.jpg": .jpeg(photo, headers: [("Last-Modified", "yesterday; <script>")]),
        ]) { proxy, base, _ in
            let dated = try await proxy.image([("url", base + "/dated.jpg"), ("w", "50")])
            #expect(dated.headers[.lastModified] == stamp)
            let again = try await proxy.image([("url", base + "/dated.jpg"), ("w", "50")])
            #expect(again.headers[.xCacheTier] == "memory" && again.headers[.lastModified] == stamp)
            let before = Int(Date().timeIntervalSince1970)
            let plain = try await proxy.image([("url", base + "/plain.jpg"), ("w", "50")])
            let made = try #require(plain.headers[.lastModified])
            let parsed = try #require(Self.parseHTTPDate(made), "\(made) is an HTTP date")
            #expect(abs(parsed - before) <= 2)
            let odd = try await proxy.image([("url", base + "/odd.jpg"), ("w", "50")])
            #expect(odd.headers[.lastModified].flatMap(Self.parseHTTPDate) != nil, "a malformed origin date is replaced")
        }
    }

    @Test func contentDispositionNamesTheSourceWithTheOutputExtension() async throws {
        let photo = try TestImages.jpeg(width: 320, height: 240)
        try await withFixtures(["/photos/Sommer%20Haus.jpeg": .jpeg(photo), "/p.jpg": .jpeg(photo)], configure: {
            $0.http.contentDisposition = true
        }) { proxy, base, _ in
            let webp = try await proxy.image([("url", base + "/photos/Sommer%20Haus.jpeg"), ("w", "50"), ("format", "webp")])
            #expect(webp.headers[.contentDisposition] == "inline; filename=\"Sommer_Haus.webp\"")
            let png = try await proxy.image([("url", base + "/p.jpg"), ("w", "50"), ("format", "png")])
            #expect(png.headers[.contentDisposition] == "inline; filename=\"p.png\"")
        }
        try await withFixtures(["/p.jpg": .jpeg(photo)]) { proxy, base, _ in
            let plain = try await proxy.image([("url", base + "/p.jpg"), ("w", "50")])
            #expect(plain.headers[.contentDisposition] == nil, "off by default")
        }
    }

    static func parseHTTPDate(_ text: String) -> Int? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text).map { Int($0.timeIntervalSince1970) }
    }
}
