import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// The OpenAPI document: served, equal to `api/openapi.json`, and naming every route and `/img` parameter.
@Suite struct OpenAPIDocumentTests {
    static let repositoryFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("api/openapi.json")

    @Test func theServedDocumentIsTheRepositorysAndCoversTheAPI() async throws {
        let committed = try String(contentsOf: Self.repositoryFile, encoding: .utf8)
        #expect(committed == OpenAPIDocument.json, "the embedded document is api/openapi.json byte for byte")
        // (With an admin token, so that the admin routes are on.)
        try await withOriginAndProxy(configure: { $0.cache.adminToken = "openapi-test-token" }) { proxy, _, _ in
            let served = try await proxy.execute(uri: "/openapi.json", method: .get, headers: [:], body: nil)
            #expect(served.status == .ok && served.headers[.contentType] == "application/json")
            #expect(String(buffer: served.body) == OpenAPIDocument.json)
            // Every route of the table is registered with a handler: no 404 for any of its methods.
            for route in RouteTable.all {
                for method in route.methods {
                    let answer = try await proxy.execute(uri: route.path, method: method, headers: [:], body: nil)
                    #expect(answer.status != .notFound && answer.status != .methodNotAllowed, "\(method) \(route.path): \(answer.status)")
                }
            }
        }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        // The route table is the one list of routes; the document adds the preflight of /img.
        var routes: [String: Set<String>] = [:]
        for route in RouteTable.all { routes[route.path] = Set(route.methods.map { $0.rawValue.lowercased() }) }
        routes["/img"]?.insert("options")
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
