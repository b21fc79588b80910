import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ProxyCore
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

    init(_ files: [String: File]) { self.files = files }

    /// Runs `body` with the origin live; `base` is `http://127.0.0.1:<port>`.
    func run<Value: Sendable>(_ body: @Sendable (_ base: String) async throws -> Value) async throws -> Value {
        let router = Router()
        let files = self.files, hits = self.hits
        router.get("/**") { request, _ -> Response in
            let path = request.uri.path
            guard let file = files[path] else { return Response(status: .notFound) }
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
