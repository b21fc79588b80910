import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TestSupport

@testable import ProxyServer

/// A page whose `<img>` tags hold imgproxy and thumbor URLs, in headless Chromium, with each proxy host
/// pointed at the real binary (one with imgproxy's URLs at `/`, one with thumbor's at `/`): every image loads,
/// at the size its URL asks for.
@Suite(.serialized, .timeLimit(.minutes(2))) struct DialectBrowserTests {
    @Test func aPageOfImgproxyAndThumborURLsLoadsInARealBrowser() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: StatusPageBrowserTests.chromium),
            "headless Chromium is needed: bash scripts/setup.sh --tests installs it")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-dialect-page-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (key, salt, securityKey) = ("6b6579", "73616c74", "page-security-key")
        try await TestOrigin().makeApplication().test(.live) { origin in
            let source = "http://127.0.0.1:\(origin.port!)/photo.jpg"
            let common = ["IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true"]
            let imgproxyHost = try await ServiceProcess(environment: common.merging([
                "IMAGEPROXY_CACHE_DIR": folder.appendingPathComponent("imgproxy-cache").path,
                "IMAGEPROXY_COMPAT_IMGPROXY_ENABLED": "true", "IMGPROXY_KEY": key, "IMGPROXY_SALT": salt,
            ]) { $1 })
            let thumborHost = try await ServiceProcess(environment: common.merging([
                "IMAGEPROXY_CACHE_DIR": folder.appendingPathComponent("thumbor-cache").path,
                "IMAGEPROXY_COMPAT_THUMBOR_ENABLED": "true", "IMAGEPROXY_COMPAT_THUMBOR_SECURITY_KEY": securityKey,
            ]) { $1 })
            let imgproxy = try #require(try ImgproxySigner(keys: [key], salts: [salt]))
            let thumbor = try #require(ThumborSigner(securityKey: securityKey))
            let encoded = Data(source.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let imgproxyPaths = ["/rs:fill:120:80/g:ce/plain/\(source)@webp", "/rs:fit:64:64/\(encoded).png"]
            let thumborPaths = [
                "90x60/smart/\(source.dropFirst(7))", "fit-in/50x50/filters:format(webp):quality(70)/\(source.dropFirst(7))",
            ]
            let images =
                imgproxyPaths.map { "http://127.0.0.1:\(imgproxyHost.port)/\(imgproxy.signature(of: $0))\($0)" }
                + thumborPaths.map { "http://127.0.0.1:\(thumborHost.port)/\(thumbor.signature(of: $0))/\($0)" }
            let page = """
                <!doctype html><html><body>
                \(images.map { "<img src=\"\($0)\">" }.joined(separator: "\n"))
                <script>
                window.addEventListener("load", () => {
                  document.body.dataset.sizes = [...document.images].map((i) => i.naturalWidth + "x" + i.naturalHeight).join(" ");
                });
                </script></body></html>
                """
            let file = folder.appendingPathComponent("page.html")
            try page.write(to: file, atomically: true, encoding: .utf8)
            let dom = try StatusPageBrowserTests.renderedDOM(file.absoluteString, budget: 5000)
            let sizes = try #require(dom.firstMatch(of: /data-sizes="([^"]*)"/).map { String($0.1) }, "the page loaded: \(dom.prefix(400))")
            // photo.jpg is 800x600 (TestOrigin): fill 120x80, fit 64x64 → 64x48, cover 90x60, fit-in 50x50 → 50x38.
            #expect(sizes == "120x80 64x48 90x60 50x38", "each image at its URL's size: \(sizes)")
            for host in [imgproxyHost, thumborHost] {
                host.signal(SIGTERM)
                _ = await host.waitForExit(timeout: .seconds(10))
            }
        }
    }
}
