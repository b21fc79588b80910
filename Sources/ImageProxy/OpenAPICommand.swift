import ArgumentParser
import ImageCore
import ProxyServer
import ProxyEngine

/// `ImageProxy openapi`: prints the OpenAPI 3.1 document the service serves at `/openapi.json`.
struct OpenAPICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi", abstract: "Print the OpenAPI 3.1 description of the HTTP API (as served at /openapi.json).")

    func run() throws {
        print(OpenAPIDocument.json, terminator: "")
    }
}
