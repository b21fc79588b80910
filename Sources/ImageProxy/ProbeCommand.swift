import ArgumentParser
import Logging
import ProxyCore

/// `ImageProxy probe URL`: exits 0 when URL answers 2xx within 3 s (a container HEALTHCHECK without curl).
struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "Check a URL of a running service (e.g. http://127.0.0.1:8080/health).")

    @Argument(help: "The URL to fetch.")
    var url: String = "http://127.0.0.1:8080/health"

    func run() async throws {
        var settings = ProxyConfiguration()
        settings.allow.loopbackSources = true
        settings.allow.privateSources = true
        settings.fetch.timeoutMilliseconds = 3000
        settings.fetch.concurrency = 1
        let fetcher = OriginFetcher(
            settings: .init(settings), logger: Logger(label: "probe", factory: { _ in SwiftLogNoOpLogHandler() }))
        fetcher.start()
        let failure: (any Error)?
        do {
            _ = try await fetcher.fetch(try SourceURL(parsing: url))
            failure = nil
        } catch {
            failure = error
        }
        try? await fetcher.shutdown()
        if let failure {
            print("probe failed: \(failure)")
            throw ExitCode.failure
        }
        print("ok")
    }
}
