import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization

@testable import ImageCore

/// The one origin harness of the tests: a real HTTP server on 127.0.0.1 (port 0). `TestOrigin()` serves
/// generated images and error cases (slow, huge, redirects, ranges, flaky, ...); `TestOrigin(files)`
/// serves a fixed set of files instead, each with its own headers, answering `If-None-Match` with 304
/// when the file has an ETag. Both count the requests they receive (``Hits``).
public struct TestOrigin: Sendable {
    /// Requests received per path.
    public final class Hits: Sendable {
        private let counts = Mutex<[String: Int]>([:])
        private let events = Mutex<[String]>([])
        public init() {}
        public func record(_ path: String) {
            counts.withLock { $0[path, default: 0] += 1 }
            note(path)
        }
        public func count(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }
        /// Counts an event under `name` without logging it.
        public func bump(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
        /// Appends to the event log (every request path in arrival order, plus route-specific events).
        public func note(_ event: String) { events.withLock { $0.append(event) } }
        /// The event log so far.
        public var log: [String] { events.withLock { $0 } }
    }

    /// One file of a fixture origin.
    public struct File: Sendable {
        public var bytes: [UInt8]
        public var contentType: String
        /// Extra response headers (e.g. `Cache-Control`).
        public var headers: [(String, String)] = []
        /// The ETag, when the origin gives one (then conditional requests get 304).
        public var etag: String?

        public init(bytes: [UInt8], contentType: String, headers: [(String, String)] = [], etag: String? = nil) {
            self.bytes = bytes
            self.contentType = contentType
            self.headers = headers
            self.etag = etag
        }
    }

    /// Files that take the place of `files` from the moment they are set (a source that changes at its origin).
    public final class Replacements: Sendable {
        private let files = Mutex<[String: File]>([:])
        public func set(_ path: String, _ file: File) { files.withLock { $0[path] = file } }
        func file(_ path: String) -> File? { files.withLock { $0[path] } }
    }

    /// The fixture files (nil: the generated images and error cases).
    public let files: [String: File]?
    public let hits = Hits()
    /// Fixture files replaced while the origin runs.
    public let replacements = Replacements()

    /// The origin of generated images and error cases.
    public init() { files = nil }

    /// An origin serving `files` (path to file).
    public init(_ files: [String: File]) { self.files = files }

    /// Runs `body` with the origin live; `base` is `http://127.0.0.1:<port>`.
    public func run<Value: Sendable>(_ body: @Sendable (_ base: String) async throws -> Value) async throws -> Value {
        try await makeApplication().test(.live) { client in try await body("http://127.0.0.1:\(client.port!)") }
    }

    /// The origin's application, to start with HummingbirdTesting.
    public func makeApplication() -> some ApplicationProtocol {
        let router = Router()
        if let files { addFiles(files, to: router) } else { addGeneratedRoutes(to: router) }
        return Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            logger: Logger(label: "test-origin", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    private func addFiles(_ files: [String: File], to router: Router<BasicRequestContext>) {
        let hits = self.hits, replacements = self.replacements
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
    }

    public static let jpeg = try! TestImages.jpeg()
    static let alphaPNG = try! TestImages.halfTransparent(width: 400, height: 300).encoded(as: .png).bytes
    static let webp = try! TestImages.gradient(width: 640, height: 480).encoded(as: .webp).bytes
    public static let rotatedJPEG = try! TestImages.rotatedJPEG()
    static let edgePNG = try! TestImages.edge(width: 200, height: 100).encoded(as: .png).bytes
    static let busyPNG = try! TestImages.busyOnTheRight(width: 400, height: 200).encoded(as: .png).bytes
    static let borderedPNG = try! TestImages.bordered(innerWidth: 100, innerHeight: 60, border: 20).encoded(as: .png).bytes
    static let animatedGIF = try! TestImages.animation(width: 120, height: 80, frames: 6).encoded(as: .gif).bytes
    static let solidPNG = try! TestImages.solid(width: 300, height: 150, red: 220, green: 40, blue: 40).encoded(as: .png).bytes
    static let gradientPNG = try! TestImages.gradient(width: 800, height: 600).encoded(as: .png).bytes

    /// A large JPEG for `/ranged.jpg`.
    public static let noiseJPEG = try! TestImages.noiseJPEG()
    static let rangedETag = "\"ranged-v1\""

    /// Bytes of the streamed `/huge` body (sent chunked, without Content-Length).
    static let hugeBytes = 2 * 1024 * 1024

    private func addGeneratedRoutes(to router: Router<BasicRequestContext>) {
        let hits = self.hits
        router.add(middleware: HitCounter(hits: hits))
        @Sendable func image(_ bytes: [UInt8], type: String) -> Response {
            Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        router.get("/photo.jpg") { _, _ in image(Self.jpeg, type: "image/jpeg") }
        router.get("/counted.jpg") { _, _ in image(Self.jpeg, type: "image/jpeg") }
        router.get("/alpha.png") { _, _ in image(Self.alphaPNG, type: "image/png") }
        router.get("/photo.webp") { _, _ in image(Self.webp, type: "image/webp") }
        router.get("/rotated.jpg") { _, _ in image(Self.rotatedJPEG, type: "image/jpeg") }
        router.get("/edge.png") { _, _ in image(Self.edgePNG, type: "image/png") }
        router.get("/busy.png") { _, _ in image(Self.busyPNG, type: "image/png") }
        router.get("/bordered.png") { _, _ in image(Self.borderedPNG, type: "image/png") }
        router.get("/animated.gif") { _, _ in image(Self.animatedGIF, type: "image/gif") }
        router.get("/solid.png") { _, _ in image(Self.solidPNG, type: "image/png") }
        router.get("/gradient.png") { _, _ in image(Self.gradientPNG, type: "image/png") }
        router.get("/mislabelled") { _, _ in image(Self.jpeg, type: "text/plain") }
        router.get("/text.txt") { _, _ in image(Array("hello, not an image\n".utf8), type: "image/jpeg") }
        router.get("/corrupt.jpg") { _, _ in image(Array(Self.jpeg.prefix(20)) + [UInt8](repeating: 0x41, count: 4000), type: "image/jpeg") }
        router.get("/missing") { _, _ in Response(status: .notFound) }
        router.get("/gone") { _, _ in Response(status: .gone) }
        router.get("/error") { _, _ in Response(status: .internalServerError) }
        router.get("/slow") { _, _ in
            try await Task.sleep(for: .seconds(3))
            return image(Self.jpeg, type: "image/jpeg")
        }
        router.get("/huge") { _, _ in
            Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init { writer in
                let chunk = ByteBuffer(bytes: Self.jpeg.prefix(3) + [UInt8](repeating: 0, count: 64 * 1024 - 3))
                for _ in 0..<(Self.hugeBytes / chunk.readableBytes) { try await writer.write(chunk) }
                try await writer.finish(nil)
            })
        }
        router.get("/fresh.jpg") { request, _ in
            // Fresh for 2 s, with an ETag; answers 304 to a matching If-None-Match.
            if request.headers[.ifNoneMatch] == "\"fresh-v1\"" {
                return Response(status: .notModified, headers: [.eTag: "\"fresh-v1\"", .cacheControl: "max-age=2"])
            }
            var response = image(Self.jpeg, type: "image/jpeg")
            response.headers[.eTag] = "\"fresh-v1\""
            response.headers[.cacheControl] = "max-age=2"
            return response
        }
        router.get("/fresh-slow.jpg") { request, _ in
            // As /fresh.jpg, but a matching conditional request waits 500 ms for its 304.
            if request.headers[.ifNoneMatch] == "\"fresh-v1\"" {
                try await Task.sleep(for: .milliseconds(500))
                return Response(status: .notModified, headers: [.eTag: "\"fresh-v1\"", .cacheControl: "max-age=2"])
            }
            var response = image(Self.jpeg, type: "image/jpeg")
            response.headers[.eTag] = "\"fresh-v1\""
            response.headers[.cacheControl] = "max-age=2"
            return response
        }
        router.get("/nostore.jpg") { _, _ in
            var response = image(Self.jpeg, type: "image/jpeg")
            response.headers[.cacheControl] = "no-store"
            return response
        }
        router.get("/slow-ms/:delay") { _, context in
            // Answers after the given number of milliseconds.
            let delay = Int(context.parameters.get("delay") ?? "0") ?? 0
            try await Task.sleep(for: .milliseconds(delay))
            return image(Self.jpeg, type: "image/jpeg")
        }
        router.get("/named/:name/:delay") { _, context in
            // Like /slow-ms, with a distinct path per name (so the log shows the order of requests).
            let delay = Int(context.parameters.get("delay") ?? "0") ?? 0
            try await Task.sleep(for: .milliseconds(delay))
            return image(Self.jpeg, type: "image/jpeg")
        }
        router.get("/drip/:name") { request, _ in
            // 64 KiB every 100 ms for 5 s; notes "aborted:<path>" when the client goes away before the end.
            let path = request.uri.path
            return Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init { writer in
                let chunk = ByteBuffer(bytes: [UInt8](repeating: 0x41, count: 64 * 1024))
                do {
                    for _ in 0..<50 {
                        try await writer.write(chunk)
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    try await writer.finish(nil)
                } catch {
                    hits.note("aborted:" + path)
                    throw error
                }
            })
        }
        router.get("/chunked/:count") { _, context in
            // `count` bytes (at most 1 MiB) of a repeating pattern in 64 KiB chunks, without a Content-Length.
            let count = min(1 << 20, max(0, context.parameters.get("count", as: Int.self) ?? 0))
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: .init { writer in
                var offset = 0
                while offset < bytes.count {
                    let end = min(bytes.count, offset + 64 * 1024)
                    try await writer.write(ByteBuffer(bytes: bytes[offset..<end]))
                    offset = end
                }
                try await writer.finish(nil)
            })
        }
        router.get("/ranged.jpg") { request, _ in
            // A large JPEG sent in 32 KiB chunks every 30 ms, resumable: Accept-Ranges, a strong ETag, and
            // `Range: bytes=N-` honoured when If-Range matches. Notes "range:<value>" for every range asked.
            let bytes = Self.noiseJPEG
            var start = 0
            if let range = request.headers[.range] {
                hits.note("range:" + range)
                if request.headers[.ifRange] == Self.rangedETag, range.hasPrefix("bytes="), range.hasSuffix("-"),
                    let first = Int(range.dropFirst(6).dropLast()), first < bytes.count {
                    start = first
                }
            }
            var headers: HTTPFields = [.contentType: "image/jpeg", .eTag: Self.rangedETag, .acceptRanges: "bytes"]
            headers[.contentLength] = String(bytes.count - start)
            if start > 0 { headers[.contentRange] = "bytes \(start)-\(bytes.count - 1)/\(bytes.count)" }
            let from = start
            return Response(status: start > 0 ? .partialContent : .ok, headers: headers, body: .init { writer in
                var offset = from
                while offset < bytes.count {
                    let end = min(bytes.count, offset + 32 * 1024)
                    try await writer.write(ByteBuffer(bytes: bytes[offset..<end]))
                    hits.bump("ranged-chunk")
                    offset = end
                    try await Task.sleep(for: .milliseconds(30))
                }
                try await writer.finish(nil)
            })
        }
        router.get("/slowish.jpg") { _, _ in
            try await Task.sleep(for: .milliseconds(400))
            return image(Self.jpeg, type: "image/jpeg")
        }
        router.get("/hop-checked.jpg") { request, _ in
            // Serves the image only to requests that carry the image proxy's hop marker.
            request.headers[HTTPField.Name("X-ImageProxy-Hop")!] == "1"
                ? image(Self.jpeg, type: "image/jpeg") : Response(status: .badRequest)
        }
        router.get("/cred.jpg") { request, _ in
            request.headers[.authorization] == "Bearer origin-secret"
                ? image(Self.jpeg, type: "image/jpeg") : Response(status: .unauthorized)
        }
        router.get("/cred-redirect") { request, _ in
            // Leaves for another host name of the same server.
            let host = (request.head.authority ?? "").replacingOccurrences(of: "127.0.0.1", with: "localhost")
            return Response(status: .found, headers: [.location: "http://\(host)/no-cred.jpg"])
        }
        router.get("/no-cred.jpg") { request, _ in
            request.headers[.authorization] == nil ? image(Self.jpeg, type: "image/jpeg") : Response(status: .badRequest)
        }
        router.get("/bomb.png") { _, _ in image(HostileImages.hugeDeclaredPNG(width: 20_000, height: 20_000), type: "image/png") }
        router.get("/truncated.png") { _, _ in image(Array(Self.gradientPNG.prefix(Self.gradientPNG.count / 2)), type: "image/png") }
        router.get("/garbage.jpg") { _, _ in image((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }, type: "image/jpeg") }
        router.get("/image.svg") { _, _ in image(HostileImages.svg, type: "image/svg+xml") }
        router.get("/many-frames.gif") { _, _ in image(HostileImages.manyFramesGIF, type: "image/gif") }
        router.get("/presigned.jpg") { _, _ in image(Self.jpeg, type: "image/jpeg") }
        router.get("/flaky.jpg") { _, _ in
            // Fails twice with 503, then serves the image.
            hits.count("/flaky.jpg") <= 2 ? Response(status: .serviceUnavailable) : image(Self.jpeg, type: "image/jpeg")
        }
        router.get("/redirect") { _, _ in Response(status: .found, headers: [.location: "/photo.jpg"]) }
        router.get("/redirect-ftp") { _, _ in Response(status: .found, headers: [.location: "ftp://127.0.0.1/x.jpg"]) }
        router.get("/redirect-loop") { _, _ in Response(status: .found, headers: [.location: "/redirect-loop"]) }
    }

    struct HitCounter<Context: RequestContext>: RouterMiddleware {
        let hits: Hits
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            hits.record(request.uri.path)
            if request.headers[.ifNoneMatch] != nil || request.headers[.ifModifiedSince] != nil {
                hits.record("conditional:" + request.uri.path)
            }
            return try await next(request, context)
        }
    }
}

