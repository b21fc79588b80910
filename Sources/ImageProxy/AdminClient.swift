import ArgumentParser
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
import ImageCore
import ProxyEngine
#endif

/// Talks to a running instance for the ops commands (`cache`, `status`, `probe`): plain HTTP on
/// loopback or the cluster network, the admin token from `IMAGEPROXY_CACHE_ADMIN_TOKEN`, and errors that
/// say what to do (instance down, token missing or wrong) rather than a transport error's text.
struct AdminClient {
    /// What an ops command reports when the instance does not give what it needs.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Base URL of the instance, e.g. `http://127.0.0.1:8080`.
    let server: String
    let token: String?

    /// The instance named by `--server`, else by `IMAGEPROXY_BIND` (0.0.0.0 → 127.0.0.1), else 127.0.0.1:8080.
    static func resolve(server: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> AdminClient {
        var base = server ?? environment["IMAGEPROXY_BIND"].map { bind in
            let local = bind.replacingOccurrences(of: "0.0.0.0:", with: "127.0.0.1:").replacingOccurrences(of: "[::]:", with: "127.0.0.1:")
            return "http://" + local
        } ?? "http://127.0.0.1:8080"
        if !base.contains("://") { base = "http://" + base }
        while base.hasSuffix("/") { base.removeLast() }
        let token = environment["IMAGEPROXY_CACHE_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return AdminClient(server: base, token: token)
    }

    /// Sends a request; returns status and body. Throws ``Failure`` when the instance cannot be reached.
    func send(_ method: String, _ path: String, admin: Bool = false, timeout: TimeInterval = 5) async throws -> (status: Int, body: Data) {
        guard let url = URL(string: server + path) else { throw Failure(description: "not a URL: \(server + path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = timeout
        if admin {
            guard let token else {
                throw Failure(description: "set IMAGEPROXY_CACHE_ADMIN_TOKEN to the instance's cache.adminToken (the admin API needs it)")
            }
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        do {
            let (data, response) = try await session.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            if admin {
                if status == 401 {
                    throw Failure(description: "the instance refused the admin token (401): IMAGEPROXY_CACHE_ADMIN_TOKEN must equal its cache.adminToken")
                }
                if status == 404 {
                    throw Failure(description: "the instance at \(server) has no admin API: its cache.adminToken is not set")
                }
            }
            return (status, data)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "cannot reach ImageProxy at \(server) (\(Self.reason(error))): is it running? (--server, IMAGEPROXY_BIND)")
        }
    }

    /// A JSON object from an admin answer.
    func json(_ method: String, _ path: String) async throws -> Any {
        let (status, body) = try await send(method, path, admin: true)
        guard (200..<300).contains(status), let object = try? JSONSerialization.jsonObject(with: body) else {
            throw Failure(description: "\(method) \(path) answered \(status): \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        return object
    }

    private static func reason(_ error: any Error) -> String {
        guard let urlError = error as? URLError else { return "\(error)" }
        switch urlError.code {
        case .cannotConnectToHost: return "connection refused"
        case .timedOut: return "timed out"
        case .cannotFindHost: return "unknown host"
        default: return urlError.localizedDescription
        }
    }
}
