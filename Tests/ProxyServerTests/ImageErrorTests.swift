import Foundation
import Hummingbird
import HummingbirdTesting
import ProxyServer
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// Every error status of `/img`, produced by real failures of a live origin.
@Suite(.timeLimit(.minutes(2))) struct ImageErrorTests {
    @Test func originErrorsMapToStatuses() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let cases: [(String, HTTPResponse.Status)] = [
                ("/missing", .notFound),
                ("/gone", .notFound),
                ("/error", .badGateway),
                ("/text.txt", .unsupportedMediaType),
                ("/corrupt.jpg", .unprocessableContent),
                ("/slow", .gatewayTimeout),
                ("/huge", .contentTooLarge),
                ("/redirect-ftp", .forbidden),
                ("/redirect-loop", .badGateway),
            ]
            for (path, status) in cases {
                let response = try await proxy.image([("url", origin + path), ("w", "50")])
                #expect(response.status == status, "\(path): \(response.status) \(response.text)")
                #expect(response.headers[.contentType] == "text/plain; charset=utf-8", "\(path)")
                #expect(!response.text.isEmpty && !response.text.contains("/work/"), "\(path)")
            }
        }
    }

    @Test func closedPortIsBadGateway() async throws {
        try await withOriginAndProxy { proxy, _, _ in
            let response = try await proxy.image([("url", "http://127.0.0.1:1/x.jpg")])
            #expect(response.status == .badGateway)
        }
    }

    @Test func tooManyPixelsIsRefusedFromTheHeader() async throws {
        try await withOriginAndProxy(configure: { $0.image.transformer.maxSourcePixels = 100_000 }) { proxy, origin, _ in
            let response = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "50")])
            #expect(response.status == .unprocessableContent)
            #expect(response.text.contains("100000 pixels"))
        }
    }

    @Test func loopbackSourcesAreRefusedByDefault() async throws {
        try await withOriginAndProxy(configure: { $0.fetch.policy = AddressPolicy() }) { proxy, origin, hits in
            for url in ["\(origin)/photo.jpg", origin.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/photo.jpg",
                        origin.replacingOccurrences(of: "127.0.0.1", with: "[::ffff:127.0.0.1]") + "/photo.jpg"] {
                let response = try await proxy.image([("url", url), ("w", "50")])
                #expect(response.status == .forbidden, "\(url)")
                #expect(response.text.contains("not allowed"), "\(url)")
            }
            #expect(hits.count("/photo.jpg") == 0)
        }
    }

    @Test func badParametersAreNamed() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let url = "\(origin)/photo.jpg"
            let cases: [(String, String)] = [
                ("w=100", "url"),
                ("url=\(url)&zoom=2", "zoom"),
                ("url=\(url)&w=1&w=2", "w"),
                ("url=\(url)&w=0", "w"),
                ("url=\(url)&w=abc", "w"),
                ("url=\(url)&w=5000", "w"),
                ("url=\(url)&h=-4", "h"),
                ("url=\(url)&fit=zoom", "fit"),
                ("url=\(url)&format=bmp", "format"),
                ("url=\(url)&q=0", "q"),
                ("url=\(url)&q=101", "q"),
                ("url=\(url)&dpr=5", "dpr"),
                ("url=\(url)&enlarge=2", "enlarge"),
                ("url=\(url)&filter=vintage", "filter"),
                ("url=\(url)&filter=blur", "filter"),
                ("url=\(url)&filter=blur:abc", "filter"),
                ("url=ftp://127.0.0.1/x.jpg", "url"),
                ("url=/relative.jpg", "url"),
                ("url=http://user:pw@127.0.0.1/x.jpg", "url"),
            ]
            for (query, parameter) in cases {
                let response = try await proxy.execute(uri: "/img?\(query)", method: .get, headers: [:], body: nil)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.text.contains("'\(parameter)'"), "\(query): \(response.text)")
            }
        }
    }
}
