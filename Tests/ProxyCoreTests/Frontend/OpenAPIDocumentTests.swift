import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import ImageCore
@testable import ProxyCore
@testable import ProxyEngine

/// The OpenAPI document: served, equal to `api/openapi.json`, and naming every route and `/img` parameter.
@Suite struct OpenAPIDocumentTests {
    static let repositoryFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("api/openapi.json")

    @Test func theServedDocumentIsTheRepositorysAndCoversTheAPI() async throws {
        let committed = try String(contentsOf: Self.repositoryFile, encoding: .utf8)
        #expect(committed == OpenAPIDocument.json, "api/openapi.json differs: run ImageProxy openapi > api/openapi.json")
        try await withOriginAndProxy { proxy, _, _ in
            let served = try await proxy.execute(uri: "/openapi.json", method: .get, headers: [:], body: nil)
            #expect(served.status == .ok && served.headers[.contentType] == "application/json")
            #expect(String(buffer: served.body) == OpenAPIDocument.json)
        }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let routes: [String: Set<String>] = [
            "/img": ["get", "head", "options"], "/info": ["get"], "/prefetch": ["post"], "/health": ["get"], "/ready": ["get"],
            "/metrics": ["get"], "/": ["get"], "/status": ["get"], "/status/live": ["get"], "/cache": ["delete"],
            "/cache/stats": ["get"], "/favicon.ico": ["get"], "/openapi.json": ["get"],
        ]
        #expect(Set(paths.keys) == Set(routes.keys))
        for (path, methods) in routes {
            #expect(Set(paths[path]?.keys.map { $0 } ?? []) == methods, "\(path)")
        }
        let image = try #require(paths["/img"]?["get"] as? [String: Any])
        let parameters = try #require(image["parameters"] as? [[String: Any]])
        let query = Set(parameters.filter { $0["in"] as? String == "query" }.compactMap { $0["name"] as? String })
        #expect(query == ImageRequest.knownParameters.union(["sig", "preset"]), "every /img parameter is described")
        let statuses = Set((image["responses"] as? [String: Any])?.keys.map { $0 } ?? [])
        #expect(statuses.isSuperset(of: ["200", "304", "400", "403", "404", "413", "415", "422", "502", "503", "504"]))
    }
}
