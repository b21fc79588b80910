import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import ProxyEngine

/// Checks that come before any work on `/img` and `/info`: the URL signature (when keys are
/// configured), and that the request is not a loop back into an image proxy.
///
/// In presets-only mode (`http.presetsOnly`) an `/img` request can name only a source and presets (it
/// must name one, or `http.defaultPreset` applies), so an unsigned one is let through (a browser-side
/// loader holds no key); a `sig` that is given is still checked. `/info` answers only signed URLs in that
/// mode (none at all without a key): it is not a preset's variant.
struct SourceGuard: Sendable {
    let signer: URLSigner?
    /// The configured listen address (`bind`).
    let listen: ListenAddress
    /// The port the server actually got (for `bind` port 0), stored once it listens.
    let listeningPort: AtomicCounter
    /// `http.presetsOnly`: signatures are optional.
    var presetsOnly = false

    /// Signature and loop checks on the raw request.
    /// - Throws: ``SignatureError`` or ``LoopError`` (403).
    func check(_ request: Request) throws {
        try checkNotLooping(request.headers)
        try verifySignature(request.uri.description)
    }

    /// The checks of ``check(_:)`` for a route that is not a preset's variant (`/info`): in presets-only
    /// mode it needs a signature whatever it carries.
    /// - Throws: ``SignatureError`` or ``LoopError`` (403).
    func checkSignedBeyondPresets(_ request: Request) throws {
        try checkNotLooping(request.headers)
        let target = request.uri.description
        guard presetsOnly else { return try verifySignature(target) }
        guard let signer, target.contains("?sig=") || target.contains("&sig=") else { throw SignatureError.infoNeedsSignature }
        try signer.verify(target)
    }

    /// The hop rule, for every route that makes the service fetch: a request carrying the marker an image
    /// proxy sends to origins came from an image proxy (this one through a loop, or another one).
    /// - Throws: ``LoopError`` (403).
    func checkNotLooping(_ headers: HTTPFields) throws(LoopError) {
        if headers[.imageProxyHop] != nil { throw LoopError() }
    }

    /// Checks the signature of a request target (path and query), unless none is needed.
    func verifySignature(_ requestTarget: String) throws(SignatureError) {
        guard let signer else { return }
        if presetsOnly, !requestTarget.contains("?sig="), !requestTarget.contains("&sig=") { return }
        try signer.verify(requestTarget)
    }

    /// The decoded query, without `sig` when signatures are in use.
    func query(of request: Request) -> [(name: String, value: String)] {
        request.uri.queryParameters.compactMap { name, value in
            signer != nil && name == "sig" ? nil : (name: String(name), value: String(value))
        }
    }

    /// Refuses a request whose source or watermark image is this service's own `/img` or `/info`.
    func checkNotSelf(_ request: ImageRequest) throws {
        try checkNotSelf(request.source)
        if let watermark = request.watermark { try checkNotSelf(watermark.source) }
    }

    /// Refuses a source that is this service's own `/img` or `/info`.
    func checkNotSelf(_ source: SourceURL) throws {
        guard source.object == nil else { return }  // an s3:// object lives on the S3 endpoint, never here
        guard let components = URLComponents(string: source.absoluteString) else { return }
        let port = components.port ?? (components.scheme == "https" ? 443 : 80)
        let listeningPort = listeningPort.value
        let localNames: Set<String> = ["localhost", "127.0.0.1", "::1", "0.0.0.0", listen.host.lowercased()]
        let pointsHere = (port == listen.port || port == listeningPort)
            && (localNames.contains(source.host) || listen.host == "0.0.0.0" || listen.host == "::")
        if pointsHere && (components.path.hasPrefix("/img") || components.path.hasPrefix("/info")) { throw LoopError() }
    }
}

/// A source that points back at an image proxy (this one, or one that fetched from us): 403.
struct LoopError: PublicError {
    var httpStatus: Int { 403 }
    var publicMessage: String { "source refused: it points back at an image proxy" }
    var reason: String { "source_refused" }
}

extension HTTPField.Name {
    /// The marker an image proxy sends with its origin requests.
    static let imageProxyHop = HTTPField.Name(OriginFetcher.hopHeader)!
}
