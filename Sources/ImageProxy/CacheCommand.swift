import ArgumentParser
import Foundation
import ImageCore
import ProxyServer
import ProxyEngine

/// `ImageProxy cache stats` and `ImageProxy cache purge --url SOURCE | --all`, against a running instance's
/// admin API (`IMAGEPROXY_CACHE_ADMIN_TOKEN`).
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache", abstract: "Inspect or purge a running instance's caches (admin API).",
        subcommands: [Stats.self, Purge.self])

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes, capacity and hit ratio per cache tier.")

        @Option(help: "The instance, e.g. http://127.0.0.1:8080 (default: from IMAGEPROXY_BIND).")
        var server: String?

        func run() async throws {
            let client = AdminClient.resolve(server: server)
            do {
                let tiers = try await client.json("GET", "/cache/stats") as? [String: [String: Any]] ?? [:]
                print(CacheCommand.table(tiers))
            } catch let failure as AdminClient.Failure {
                throw ValidationFailure(failure.description)
            }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a source's original and variants (--url), or everything (--all), from both tiers.")

        @Option(help: "The instance, e.g. http://127.0.0.1:8080 (default: from IMAGEPROXY_BIND).")
        var server: String?
        @Option(help: "The source URL to purge.")
        var url: String?
        @Flag(help: "Purge every cached entry.")
        var all = false

        func validate() throws {
            guard (url != nil) != all else { throw ValidationError("give either --url SOURCE or --all") }
        }

        func run() async throws {
            let client = AdminClient.resolve(server: server)
            let query = all ? "all=1" : "url=" + (url!.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            do {
                let answer = try await client.json("DELETE", "/cache?" + query) as? [String: Any]
                print("purged \(answer?["purged"] ?? 0) entries")
            } catch let failure as AdminClient.Failure {
                throw ValidationFailure(failure.description)
            }
        }
    }

    /// The stats as an aligned text table.
    static func table(_ tiers: [String: [String: Any]]) -> String {
        func right(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        var lines = ["tier  " + right("entries", 9) + right("bytes", 12) + right("capacity", 12) + right("hit ratio", 11)]
        for tier in ["memory", "disk"] {
            guard let figures = tiers[tier] else { continue }
            func number(_ key: String) -> Double {
                if let value = figures[key] as? Double { return value }
                if let value = figures[key] as? Int { return Double(value) }
                return (figures[key] as? NSNumber)?.doubleValue ?? 0
            }
            lines.append(
                tier.padding(toLength: 6, withPad: " ", startingAt: 0) + right(String(Int(number("entries"))), 9)
                    + right(ByteCount.text(number("bytes")), 12) + right(ByteCount.text(number("capacityBytes")), 12)
                    + right(String(format: "%.1f%%", number("hitRatio") * 100), 11))
        }
        return lines.joined(separator: "\n")
    }
}

/// A command failure printed as one line, exit status 1.
struct ValidationFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
