import Foundation
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// Issue #34: a progressive JPEG's decode held whole to be kept, and a variant made from a kept one, stay
/// inside their reservations (the process's peak RSS growth through the pool, as
/// ``TransformMemoryBudgetTests`` measures the other paths).
@Suite(.timeLimit(.minutes(2))) struct KeptJPEGMemoryTests {
    static func request(_ width: Int) throws -> ImageRequest {
        try ImageRequest(query: [("url", "http://example.com/a.jpg"), ("w", String(width))], limits: .init(maxDimension: 4096))
    }

    static let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())

    @Test(arguments: [(2400, 1600, false, 1200), (2400, 1600, true, 1920), (2400, 1600, false, 2400), (3840, 2160, true, 1920)])
    func aDecodeHeldToBeKeptIsInsideItsReservation(width: Int, height: Int, subsample: Bool, output: Int) async throws {
        let source = try TestImages.jpeg(
            TestImages.noise(width: width, height: height, bands: 3), quality: 85, progressive: true, subsample: subsample)
        let request = try Self.request(output)
        let plan = try Self.transformer.plan(source, request: request, choice: .fixed(.jpeg))
        #expect(plan.decodesWhole && plan.wholeJPEGShrink == 1 && plan.reservation <= plan.fullReservation)
        let (encoded, growth, reserved) = try await TransformMemoryBudgetTests.measured(source, request, .fixed(.jpeg), Self.transformer)
        #expect(try VipsImage.decode(encoded.bytes).width == output)
        #expect(reserved == plan.reservation, "libjpeg took it: nothing grew")
        #expect(growth <= reserved, "\(width)x\(height) to \(output): RSS grew \(growth) bytes, reserved \(reserved)")
    }

    @Test(arguments: [(1920, 640), (1920, 1200), (1200, 2400)])
    func aVariantFromAKeptDecodeIsInsideItsReservation(wide: Int, narrow: Int) async throws {
        let source = try TestImages.jpeg(TestImages.noise(width: 2400, height: 1600, bands: 3), quality: 85, progressive: true, subsample: true)
        let lender = TransformMemoryBudgetTests.PeakLender()
        let pool = TransformPool(workers: 1, memoryBytes: 1 << 30, lender: lender)
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        _ = try await pool.transform(source, request: Self.request(wide), choice: .fixed(.jpeg), overlay: nil, with: Self.transformer, sourceIdentity: "a")
        #expect(pool.decodedSources.count == 1)
        let kept = try #require(pool.decodedSources.lease("a"))
        let plan = try Self.transformer.plan(source, request: Self.request(narrow), choice: .fixed(.jpeg), decoded: kept.source)
        kept.end()
        #expect(plan.usesDecodedSource)
        _ = Vips.releaseFreeMemory()
        lender.resetPeak()
        let lentBefore = pool.memoryBudget.reservedBytes
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = try TransformMemoryBudgetTests.statusKilobytes("VmRSS") * 1024
        let encoded = try await pool.transform(
            source, request: Self.request(narrow), choice: .fixed(.jpeg), overlay: nil, with: Self.transformer, sourceIdentity: "a"
        ).encoded
        let growth = try TransformMemoryBudgetTests.statusKilobytes("VmHWM") * 1024 - before
        #expect(try VipsImage.decode(encoded.bytes).width == narrow)
        let reserved = lender.peak - lentBefore
        #expect(reserved == plan.reservation, "made from the kept decode under its plan's reservation")
        #expect(growth <= reserved, "2400x1600 kept, to \(narrow): RSS grew \(growth) bytes, reserved \(reserved)")
        pool.decodedSources.removeAll()
    }
}
