import Hummingbird
import ImageCore
import ProxyEngine

/// `GET /health` (liveness, with a tiny libvips encode on the transform pool) and `GET /ready`.
struct HealthHandler: Sendable {
    let pool: TransformPool
    let readiness: Readiness

    func health(_ request: Request, context: some RequestContext) async throws -> Response {
        let healthy = (try? await pool.run { try Self.selfCheck() }) ?? false
        return healthy
            ? Response.plainText("ok", status: .ok)
            : Response.plainText("libvips self-check failed", status: .serviceUnavailable)
    }

    func ready(_ request: Request, context: some RequestContext) async throws -> Response {
        readiness.isReady
            ? Response.plainText("ready", status: .ok)
            : Response.plainText("not ready", status: .serviceUnavailable)
    }

    /// Encodes a 4×4 image to JPEG and decodes it back.
    static func selfCheck() throws -> Bool {
        let pixels = [UInt8](repeating: 200, count: 4 * 4 * 3)
        let encoded = try VipsImage.fromPixels(pixels, width: 4, height: 4, bands: 3).encoded(as: .jpeg)
        let decoded = try VipsImage.decode(encoded.bytes)
        return decoded.width == 4 && decoded.height == 4
    }
}
