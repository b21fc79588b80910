import ArgumentParser
import Foundation
import ImageCore
import ProxyServer
import ProxyEngine

/// `ImageProxy sign '/img?url=...&w=300'`: prints the path with its `sig` appended, signed with the
/// first configured key (`signingKey` / `IMAGEPROXY_SIGNING_KEY`).
struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign", abstract: "Print a path and query with its URL signature (sig) appended.")

    @Argument(help: "The path and query to sign, exactly as clients will request it, e.g. '/img?url=...&w=300'.")
    var pathAndQuery: String

    @Option(name: .long, help: "Configuration file (YAML or JSON). Default: config/imageproxy.yaml when it exists.")
    var config: String?

    func run() async throws {
        let settings: ProxyConfiguration
        do {
            settings = try await ProxyConfiguration.load(filePath: config, environment: ProcessInfo.processInfo.environment)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(2)
        }
        guard let signer = URLSigner(keys: settings.security.signingKeys) else {
            FileHandle.standardError.write(Data("no signing key: set IMAGEPROXY_SIGNING_KEY (or signingKey in the config)\n".utf8))
            throw ExitCode(2)
        }
        print(signer.sign(pathAndQuery))
    }
}
