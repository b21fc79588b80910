import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// Cross-origin reads of `/img` and `/info`: allowed origins, `*`, preflight, errors, and the memory-hit
/// front answering with the same headers as the router.
@Suite(.timeLimit(.minutes(2))) struct CORSTests {
    @Test func aListedOriginIsEchoedAndAnswersVaryOnOrigin() async throws {
        let photo = try TestImages.jpeg(width: 320, height: 240)
        try await withFixtures(["/p.jpg": .jpeg(photo)], configure: { $0.http.corsOrigins = ["https://app.example"] }) {
            proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            let allowed = try await proxy.image([url, ("w", "100")], headers: [.origin: "https://app.example"])
            #expect(allowed.status == .ok)
            #expect(allowed.headers[.accessControlAllowOrigin] == "https://app.example")
            #expect(allowed.headers[.accessControlExposeHeaders]?.contains("X-Request-Id") == true)
            #expect(allowed.headers[.vary] == "Accept, Origin")
            let other = try await proxy.image([url, ("w", "100")], headers: [.origin: "https://evil.example"])
            #expect(other.headers[.accessControlAllowOrigin] == nil)
            #expect(other.headers[.vary] == "Accept, Origin")
            // Errors carry it too: a page can read why.
            let bad = try await proxy.image([url, ("w", "0")], headers: [.origin: "https://app.example"])
            #expect(bad.status == .badRequest && bad.headers[.accessControlAllowOrigin] == "https://app.example")
            // /info as well.
            let info = try await proxy.execute(
                uri: "/info?url=\(StatusPage.percentEncode(base + "/p.jpg"))", method: .get, headers: [.origin: "https://app.example"],
                body: nil)
            #expect(info.status == .ok && info.headers[.accessControlAllowOrigin] == "https://app.example")
            // Preflight.
            let preflight = try await proxy.execute(
                uri: "/img?url=x", method: .options,
                headers: [.origin: "https://app.example", .accessControlRequestMethod: "GET", .accessControlRequestHeaders: "save-data"],
                body: nil)
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowOrigin] == "https://app.example")
            #expect(preflight.headers[.accessControlAllowMethods] == "GET, HEAD")
            #expect(preflight.headers[.accessControlAllowHeaders]?.contains("Save-Data") == true)
            #expect(preflight.headers[.accessControlMaxAge] == "86400")
            let refused = try await proxy.execute(
                uri: "/img", method: .options, headers: [.origin: "https://evil.example", .accessControlRequestMethod: "GET"], body: nil)
            #expect(refused.status == .noContent && refused.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test func starAllowsEveryoneWithoutVaryAndNoneSendsNothing() async throws {
        let photo = try TestImages.jpeg(width: 320, height: 240)
        try await withFixtures(["/p.jpg": .jpeg(photo)], configure: { $0.http.corsOrigins = ["*"] }) { proxy, base, _ in
            let response = try await proxy.image([("url", base + "/p.jpg"), ("w", "100"), ("format", "png")], headers: [.origin: "https://x.example"])
            #expect(response.headers[.accessControlAllowOrigin] == "*")
            #expect(response.headers[.vary] == nil)
        }
        try await withFixtures(["/p.jpg": .jpeg(photo)]) { proxy, base, _ in
            let response = try await proxy.image([("url", base + "/p.jpg"), ("w", "100")], headers: [.origin: "https://x.example"])
            #expect(response.headers[.accessControlAllowOrigin] == nil && response.headers[.vary] == "Accept")
            let options = try await proxy.execute(
                uri: "/img", method: .options, headers: [.origin: "https://x.example", .accessControlRequestMethod: "GET"], body: nil)
            #expect(options.status == .noContent && options.headers[.accessControlAllowOrigin] == nil)
        }
    }

    /// A memory hit answered by the front (no `Origin`, no hints) has the router's headers: CORS, Vary,
    /// Accept-CH, Last-Modified, Content-Disposition.
    @Test func theMemoryHitFrontAnswersWithTheSameHeaders() async throws {
        let photo = try TestImages.jpeg(width: 320, height: 240)
        try await withFixturesAndRuntime(["/p.jpg": .jpeg(photo)], configure: { configuration in
            configuration.http.corsOrigins = ["*"]
            configuration.http.clientHints = true
            configuration.http.saveDataQuality = 40
            configuration.http.contentDisposition = true
        }) { runtime, base in
            let port = runtime.listeningPort.value
            let path = "/img?url=\(StatusPage.percentEncode(base + "/p.jpg"))&w=100&format=webp"
            let first = try await httpRequest(port: port, path: path)
            let before = runtime.frontAnswers.value
            let second = try await httpRequest(port: port, path: path)
            #expect(runtime.frontAnswers.value == before + 1, "the second answer came from the front")
            #expect(first.status == 200 && second.status == 200)
            for name in ["access-control-allow-origin", "vary", "accept-ch", "last-modified", "content-disposition", "etag"] {
                #expect(first.headers[name] != nil && first.headers[name] == second.headers[name], "\(name)")
            }
            #expect(second.headers["vary"] == "Sec-CH-DPR, DPR, Save-Data")
            #expect(second.headers["content-disposition"] == "inline; filename=\"p.webp\"")
        }
    }
}
