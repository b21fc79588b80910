import ArgumentParser
import Foundation
import ImageCore
import ProxyEngine

/// `ImageProxy probe URL`: exits 0 when URL answers 2xx within 3 s (a container HEALTHCHECK without curl).
struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "Check a URL of a running service (e.g. http://127.0.0.1:8080/health).")

    @Argument(help: "The URL to fetch.")
    var url: String = "http://127.0.0.1:8080/health"

    func run() async throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, let host = parsed.host else {
            print("probe failed: not an http URL: \(url)")
            throw ExitCode.failure
        }
        let base = "\(scheme)://\(host)" + (parsed.port.map { ":\($0)" } ?? "")
        let client = AdminClient(server: base, token: nil)
        let path = String(url.dropFirst(base.count)).isEmpty ? "/" : String(url.dropFirst(base.count))
        do {
            let answer = try await client.send("GET", path, timeout: 3)
            guard (200..<300).contains(answer.status) else {
                print("probe failed: \(url) answered \(answer.status)")
                throw ExitCode.failure
            }
        } catch let failure as AdminClient.Failure {
            print("probe failed: \(failure.description)")
            throw ExitCode.failure
        }
        print("ok")
    }
}
