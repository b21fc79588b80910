import Foundation
import PackagePlugin

/// Makes `api/openapi.json`, the one source of the OpenAPI document, part of ProxyServer at build time: the
/// `EmbedText` tool writes it into `OpenAPIDocument.json` (served at `/openapi.json`, printed by
/// `ImageProxy openapi`). Edit the JSON; the Swift follows on the next build.
@main
struct EmbedOpenAPIDocument: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let document = context.package.directoryURL.appending(path: "api").appending(path: "openapi.json")
        let output = context.pluginWorkDirectoryURL.appending(path: "OpenAPIDocument+JSON.swift")
        return [
            .buildCommand(
                displayName: "Embedding api/openapi.json",
                executable: try context.tool(named: "EmbedText").url,
                arguments: [document.path, output.path],
                inputFiles: [document],
                outputFiles: [output])
        ]
    }
}
