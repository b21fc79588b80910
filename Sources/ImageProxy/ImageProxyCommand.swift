import ArgumentParser
import ImageCore
import ProxyEngine

/// The `ImageProxy` executable. With no subcommand it serves (`serve`).
@main
struct ImageProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ImageProxy",
        abstract: "HTTP image proxy and thumbnail service.",
        discussion: """
            Settings come from config/imageproxy.yaml (when present, or --config), overridden by IMAGEPROXY_*
            environment variables (e.g. IMAGEPROXY_BIND=0.0.0.0:8080). config/imageproxy.yaml lists every key.
            """,
        subcommands: [
            ServeCommand.self, ProbeCommand.self, SignCommand.self, CacheCommand.self, StatusCommand.self, OpenAPICommand.self,
            SettingsCommand.self,
        ],
        defaultSubcommand: ServeCommand.self)
}
