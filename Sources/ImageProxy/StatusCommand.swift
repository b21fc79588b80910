import ArgumentParser
import Foundation
import ImageCore
import ProxyServer
import ProxyEngine

/// `ImageProxy status`: a text summary of a running instance (what the status page shows): health,
/// readiness, uptime, requests, memory, queues and, with the admin token, the caches.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Summarise a running instance: health, readiness, traffic, memory, queues, caches.")

    @Option(help: "The instance, e.g. http://127.0.0.1:8080 (default: from IMAGEPROXY_BIND).")
    var server: String?

    func run() async throws {
        let client = AdminClient.resolve(server: server)
        do {
            let health = try await client.send("GET", "/health")
            let ready = try await client.send("GET", "/ready")
            let metrics = try await client.send("GET", "/metrics")
            let samples = Self.samples(String(decoding: metrics.body, as: UTF8.self))
            func sum(_ name: String, where filter: (String) -> Bool = { _ in true }) -> Double {
                samples.filter { $0.key.hasPrefix(name) && filter($0.key) }.values.reduce(0, +)
            }
            let started = sum("process_start_time_seconds")
            print("instance   \(client.server)")
            print("health     \(health.status == 200 ? "ok" : "FAILING (\(health.status))")")
            print("ready      \(ready.status == 200 ? "yes" : "no (\(ready.status))")")
            if started > 0 { print("uptime     \(Self.duration(Date().timeIntervalSince1970 - started))") }
            print("requests   \(Int(sum("imageproxy_http_requests_total"))) answered, "
                + "\(Int(sum("imageproxy_http_requests_total") { $0.contains("status=\"5") })) with 5xx")
            print("memory     RSS \(ByteCount.text(sum("process_resident_memory_bytes"))), "
                + "memory tier \(ByteCount.text(sum("imageproxy_cache_bytes") { $0.contains("tier=\"memory\"") }))")
            print("queues     fetch \(Int(sum("imageproxy_queue_depth") { $0.contains("fetch") })) waiting, "
                + "transform \(Int(sum("imageproxy_queue_depth") { $0.contains("transform") })) waiting")
            if client.token != nil {
                let tiers = try await client.json("GET", "/cache/stats") as? [String: [String: Any]] ?? [:]
                print(CacheCommand.table(tiers))
            } else {
                print("caches     (set IMAGEPROXY_CACHE_ADMIN_TOKEN for the cache figures)")
            }
        } catch let failure as AdminClient.Failure {
            throw ValidationFailure(failure.description)
        }
    }

    /// Prometheus text samples by series (`name{labels}` as written).
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds)
        return "\(total / 86_400)d \(total / 3600 % 24)h \(total / 60 % 60)m \(total % 60)s"
    }
}
