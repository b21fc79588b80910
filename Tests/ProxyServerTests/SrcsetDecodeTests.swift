import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine
@testable import ProxyServer

/// One decode for a srcset (#34), through the real server: the widths of one PNG made from one whole
/// decode, byte for byte what separate decodes make; the widths of a progressive JPEG made from one
/// decode at its DCT scale; and a changed source never resized from the old decode.
@Suite(.timeLimit(.minutes(1))) struct SrcsetDecodeTests {
    static let photo = try! TestImages.noise(width: 1200, height: 800, bands: 3).encoded(as: .png).bytes
    static let red = try! TestImages.solid(width: 600, height: 400, red: 255, green: 0, blue: 0).encoded(as: .png).bytes
    static let blue = try! TestImages.solid(width: 600, height: 400, red: 0, green: 0, blue: 255).encoded(as: .png).bytes
    static let webp = try! TestImages.noise(width: 1200, height: 800, bands: 3).encoded(as: .webp).bytes
    static let progressive = try! TestImages.jpeg(
        TestImages.noise(width: 2400, height: 1600, bands: 3), quality: 92, progressive: true, subsample: false)
    static let baseline = try! TestImages.jpeg(TestImages.noise(width: 2400, height: 1600, bands: 3), quality: 92)

    func withServer(
        keeping bytes: Int = 64 << 20, workers: Int = 0, _ body: @Sendable (any TestClientProtocol, String, TestOrigin, ProxyRuntime) async throws -> Void
    ) async throws {
        let origin = TestOrigin([
            "/photo.png": .init(bytes: Self.photo, contentType: "image/png"),
            "/photo.webp": .init(bytes: Self.webp, contentType: "image/webp"),
            "/progressive.jpg": .init(bytes: Self.progressive, contentType: "image/jpeg"),
            "/baseline.jpg": .init(bytes: Self.baseline, contentType: "image/jpeg"),
            "/changing.png": .init(bytes: Self.red, contentType: "image/png", headers: [("Cache-Control", "max-age=1")]),
        ])
        try await origin.run { base in
            var configuration = testConfiguration()
            configuration.image.decodedSourceBytes = bytes
            configuration.image.workers = workers
            configuration.fetch.maxSourceBytes = 8 << 20
            defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
            try await withProxy(configuration) { proxy, runtime in try await body(proxy, base, origin, runtime) }
        }
    }

    static func count(_ event: DecodedSourceCache.Event, in runtime: ProxyRuntime) -> Int {
        let line = runtime.metrics.exposition().split(separator: "\n")
            .first { $0.hasPrefix("imageproxy_decoded_sources_total{event=\"\(event.rawValue)\"}") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int(Double(String($0)) ?? -1) } ?? -1
    }

    @Test func theWidthsOfOneSourceShareOneDecode() async throws {
        let widths = [1000, 640, 300, 120, 1200]
        let shared = try await withServerReturning { proxy, base, _, runtime in
            var bodies: [Int: [UInt8]] = [:]
            for width in widths {
                let answer = try await proxy.image([("url", base + "/photo.png"), ("w", String(width)), ("format", "webp")])
                #expect(answer.status == .ok, "\(answer.text)")
                #expect(try VipsImage.decode(answer.bytes).width == width)
                bodies[width] = answer.bytes
            }
            #expect(Self.count(.kept, in: runtime) == 1, "one decode kept")
            #expect(Self.count(.hit, in: runtime) == widths.count - 1, "every other width made from it")
            #expect(runtime.transformPool.decodedSources.count == 1)
            // A crop is made from the bytes, not from the kept decode: not a hit.
            let cropped = try await proxy.image([("url", base + "/photo.png"), ("w", "100"), ("crop", "0,0,600,400"), ("format", "webp")])
            #expect(cropped.status == .ok, "\(cropped.text)")
            #expect(Self.count(.hit, in: runtime) == widths.count - 1, "a lease the transform cannot use is no hit")
            return bodies
        }
        // Each width alone, on a server of its own (its own decode): the same bytes below 7x (the narrowest,
        // 10x, is read by `thumbnail` from the file alone and reduced by Lanczos3 first from the kept
        // decode: WholeDecodeTests compares the two with the ideal picture).
        for width in widths where 1200 / width < 7 {
            let alone = try await withServerReturning { proxy, base, _, runtime in
                let answer = try await proxy.image([("url", base + "/photo.png"), ("w", String(width)), ("format", "webp")])
                #expect(Self.count(.hit, in: runtime) == 0)
                return answer.bytes
            }
            #expect(alone == shared[width], "w=\(width): made from the shared decode, the same bytes as alone")
        }
    }

    /// A WebP's wide width (within 3x, which libwebp decodes whole anyway) keeps its decode, and the
    /// narrower widths after it are resized from it instead of decoding the file again.
    @Test func theWidthsOfAWebPAfterAWideOneShareItsDecode() async throws {
        try await withServer { proxy, base, _, runtime in
            for width in [1000, 640, 300, 120] {
                let answer = try await proxy.image([("url", base + "/photo.webp"), ("w", String(width)), ("format", "jpeg")])
                #expect(answer.status == .ok, "\(answer.text)")
                #expect(try VipsImage.decode(answer.bytes).width == width)
            }
            #expect(Self.count(.kept, in: runtime) == 1, "the 1000 px variant's whole decode")
            #expect(Self.count(.hit, in: runtime) == 3)
        }
    }

    /// A progressive JPEG's wide width keeps its decode at its DCT scale, and the narrower widths (and the
    /// source's own width) are made from it; a baseline JPEG's widths are decoded one by one, as before.
    @Test func theWidthsOfAProgressiveJPEGShareOneDecode() async throws {
        try await withServer { proxy, base, _, runtime in
            for width in [1200, 640, 500, 2400] {
                let answer = try await proxy.image([("url", base + "/progressive.jpg"), ("w", String(width)), ("format", "jpeg")])
                #expect(answer.status == .ok, "\(answer.text)")
                #expect(try VipsImage.decode(answer.bytes).width == width)
            }
            #expect(Self.count(.kept, in: runtime) == 1, "the 1200 px variant's 1/1 decode")
            #expect(Self.count(.hit, in: runtime) == 3)
            for width in [1200, 640] {
                let answer = try await proxy.image([("url", base + "/baseline.jpg"), ("w", String(width)), ("format", "jpeg")])
                #expect(answer.status == .ok, "\(answer.text)")
            }
            #expect(Self.count(.kept, in: runtime) == 1 && Self.count(.hit, in: runtime) == 3, "nothing kept of a baseline file")
        }
    }

    /// The transform queue's preference, through the server: a width of a source whose decode is kept,
    /// waiting behind a width of another source that arrived first, starts first (and is made from the
    /// kept decode), before that decode may be given back.
    @Test func aWaitingWidthOfASourceWithAKeptDecodeStartsFirst() async throws {
        try await withServer(workers: 1) { proxy, base, _, runtime in
            let first = try await proxy.image([("url", base + "/progressive.jpg"), ("w", "1200")])
            #expect(first.status == .ok)
            #expect(Self.count(.kept, in: runtime) == 1)
            let port = runtime.listeningPort.value
            let slots = runtime.transformPool.admissionCandidates
            let finished = Mutex<[String]>([])
            // The one thread is taken, so every transform let in waits for it, and the rest wait in the queue.
            let budget = runtime.transformPool.memoryBudget
            let held = try await budget.reserve(1 << 20, wait: .seconds(10))
            func queued(_ waiting: Int) async throws {
                while runtime.metrics.stageCounts(.transform) != (waiting, slots) { try await Task.sleep(for: .milliseconds(5)) }
            }
            let ask: @Sendable (String, String, Int) async throws -> Void = { name, url, width in
                let answer = try await httpGet(port: port, path: "/img?url=\(base)\(url)&w=\(width)")
                #expect(answer.status == 200, "\(name)")
                finished.withLock { $0.append(name) }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<slots { group.addTask { try await ask("let in \(index)", "/baseline.jpg", 300 + index) } }
                try await queued(0)
                // A width decoded at 1/1 (tens of milliseconds on the one thread): when the kept source's width
                // starts first, its answer reaches the client well before this one is made.
                group.addTask { try await ask("other source", "/baseline.jpg", 2000) }
                try await queued(1)
                group.addTask { try await ask("kept source", "/progressive.jpg", 640) }
                try await queued(2)
                budget.release(held)
                try await group.waitForAll()
            }
            let order = finished.withLock { $0 }
            let kept = try #require(order.firstIndex(of: "kept source"))
            let other = try #require(order.firstIndex(of: "other source"))
            #expect(kept < other, "\(order)")
            #expect(Self.count(.hit, in: runtime) == 1, "made from the kept decode")
        }
    }

    @Test func aChangedSourceIsNeverResizedFromTheOldDecode() async throws {
        try await withServer { proxy, base, origin, runtime in
            let url = ("url", base + "/changing.png")
            let first = try await proxy.image([url, ("w", "300"), ("format", "png")])
            #expect(try VipsImage.decode(first.bytes).pixel(x: 10, y: 10).prefix(3) == [255, 0, 0])
            #expect(Self.count(.kept, in: runtime) == 1)
            // Same size, same format, other pixels; fetched again once the first copy is stale.
            origin.replacements.set("/changing.png", .init(bytes: Self.blue, contentType: "image/png", headers: [("Cache-Control", "max-age=1")]))
            try await Task.sleep(for: .milliseconds(1_300))
            let second = try await proxy.image([url, ("w", "200"), ("format", "png")])
            #expect(second.status == .ok)
            #expect(try VipsImage.decode(second.bytes).pixel(x: 10, y: 10).prefix(3) == [0, 0, 255], "the new bytes, not the kept decode")
            #expect(Self.count(.hit, in: runtime) == 0)
        }
    }

    @Test func keepingTurnedOffKeepsNothing() async throws {
        try await withServer(keeping: 0) { proxy, base, _, runtime in
            for width in [400, 200] {
                let answer = try await proxy.image([("url", base + "/photo.png"), ("w", String(width))])
                #expect(answer.status == .ok)
            }
            #expect(Self.count(.kept, in: runtime) == 0 && Self.count(.hit, in: runtime) == 0)
            #expect(runtime.transformPool.memoryBudget.reservedBytes == 0)
        }
    }

    func withServerReturning<Value: Sendable>(
        _ body: @Sendable @escaping (any TestClientProtocol, String, TestOrigin, ProxyRuntime) async throws -> Value
    ) async throws -> Value {
        let result = Mutex<Value?>(nil)
        try await withServer { proxy, base, origin, runtime in
            let value = try await body(proxy, base, origin, runtime)
            result.withLock { $0 = value }
        }
        return try #require(result.withLock { $0 })
    }
}
