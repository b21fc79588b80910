import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// The frontend features in the real executable, configured through the environment as containers do:
/// CORS with preflight, client hints, Save-Data, crop, Last-Modified and Content-Disposition.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FrontendBinaryTests {
    @Test func theBinaryServesWhatFrontendsExpect() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-frontend-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        try await TestOrigin().makeApplication().test(.live) { origin in
            let service = try await ServiceProcess(environment: [
                "IMAGEPROXY_CACHE_DIR": cache, "IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true",
                "IMAGEPROXY_HTTP_CORS_ORIGINS": "https://app.example,https://admin.example",
                "IMAGEPROXY_HTTP_CLIENT_HINTS": "true", "IMAGEPROXY_HTTP_CLIENT_HINT_WIDTHS": "100,200,400",
                "IMAGEPROXY_HTTP_SAVE_DATA_QUALITY": "25", "IMAGEPROXY_HTTP_CONTENT_DISPOSITION": "true",
            ])
            let source = StatusPage.percentEncode("http://127.0.0.1:\(origin.port!)/photo.jpg")

            let hinted = try await httpRequest(
                port: service.port, path: "/img?url=\(source)&format=png",
                headers: ["Sec-CH-Width": "150", "Origin": "https://admin.example", "Save-Data": "on"])
            #expect(hinted.status == 200)
            #expect(try VipsImage.decode([UInt8](hinted.body)).width == 200, "150 rounds up to the 200 step")
            #expect(hinted.headers["access-control-allow-origin"] == "https://admin.example")
            #expect(
                hinted.headers["vary"]
                    == "Sec-CH-Width, Width, Sec-CH-Viewport-Width, Viewport-Width, Sec-CH-DPR, DPR, Save-Data, Origin")
            #expect(hinted.headers["accept-ch"] == ClientHints.acceptCH)
            #expect(hinted.headers["content-disposition"] == "inline; filename=\"photo.png\"")
            #expect(hinted.headers["last-modified"]?.hasSuffix(" GMT") == true)

            let preflight = try await httpRequest(
                port: service.port, path: "/info?url=\(source)", method: "OPTIONS",
                headers: ["Origin": "https://app.example", "Access-Control-Request-Method": "GET"])
            #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "https://app.example")

            let cropped = try await httpRequest(port: service.port, path: "/img?url=\(source)&crop=0.0,0.0,0.5,0.5&w=50&dpr=1&format=png")
            #expect(cropped.status == 200)
            let image = try VipsImage.decode([UInt8](cropped.body))
            #expect(image.width == 50, "a quarter of the source, resized to w=50")
            service.signal(SIGTERM)
            _ = await service.waitForExit(timeout: .seconds(10))
        }
    }
}
