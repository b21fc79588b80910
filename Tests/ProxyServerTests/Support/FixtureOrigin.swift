import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ProxyServer
import Synchronization

@testable import ImageCore
@testable import ProxyEngine

/// A real origin on 127.0.0.1 (port 0) serving a fixed set of files, each with its own headers; answers
/// `If-None-Match` with 304 when the file has an ETag, and counts plain and conditional requests.
struct FixtureOrigin: Sendable {
    /// One served file.
    struct File: Sendable {
        var bytes: [UInt8]
        var contentType: String
        /// Extra response headers (e.g. `Cache-Control`).
        var headers: [(String, String)] = []
        /// The ETag, when the origin gives one (then conditional requests get 304).
        var etag: String?
    }

    let files: [String: File]
    let hits = TestOrigin.Hits()
    /// Files replaced while the origin runs (a source that changes at its origin).
    let replacements = Replacements()

    /// Files that take the place of `files` from the moment they are set.
    final class Replacements: Sendable {
        private let files = Mutex<[String: File]>([:])
        func set(_ path: String, _ file: File) { files.withLock { $0[path] = file } }
        func file(_ path: String) -> File? { files.withLock { $0[path] } }
    }

    init(_ files: [String: File]) { self.files = files }

    /// Runs `body` with the origin live; `base` is `http://127.0.0.1:<port>`.
    func run<Value: Sendable>(_ body: @Sendable (_ base: String) async throws -> Value) async throws -> Value {
        let router = Router()
        let files = self.files, hits = self.hits, replacements = self.replacements
        router.get("/**") { request, _ -> Response in
            let path = request.uri.path
            guard let file = replacements.file(path) ?? files[path] else { return Response(status: .notFound) }
            var headers = HTTPFields()
            headers[.contentType] = file.contentType
            for (name, value) in file.headers { headers[HTTPField.Name(name)!] = value }
            if let etag = file.etag {
                headers[.eTag] = etag
                if let condition = request.headers[.ifNoneMatch] {
                    hits.record("conditional:" + path)
                    if condition == etag { return Response(status: .notModified, headers: headers) }
                }
            }
            hits.record(path)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
        }
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            logger: Logger(label: "fixture-origin", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await application.test(.live) { client in try await body("http://127.0.0.1:\(client.port!)") }
    }
}
