import Foundation
import Synchronization
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// Issue #34: a variant that waited for its memory and thread while its source's decode was being kept
/// finds that decode once it has them, and is made from it (growing its reservation when the resize
/// from the kept decode needs more than its own decode would have).
@Suite(.timeLimit(.minutes(2))) struct KeptDecodeAfterWaitingTests {
    static let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
    static let progressive = try! TestImages.jpeg(
        TestImages.noise(width: 2400, height: 1600, bands: 3), quality: 85, progressive: true, subsample: true)
    static let png = try! TestImages.noise(width: 1200, height: 800, bands: 3).encoded(as: .png).bytes
    static let webp = try! TestImages.noise(width: 1200, height: 800, bands: 3).encoded(as: .webp).bytes

    static func request(_ width: Int) throws -> ImageRequest {
        try ImageRequest(query: [("url", "http://example.com/a"), ("w", String(width))], limits: .init(maxDimension: 4096))
    }

    /// The decode a `width` px variant of `source` makes and hands back to keep.
    static func keptDecode(of source: [UInt8], width: Int) throws -> DecodedSource {
        let plan = try transformer.plan(source, request: request(width), choice: .fixed(.jpeg))
        let run = try transformer.run(plan, source: source, overlay: nil, reserved: plan.reservation, grow: { _ in true })
        guard case .encoded(_, let kept?) = run else {
            Issue.record("the \(width) px variant kept no decode")
            throw CancellationError()
        }
        return kept
    }

    /// A progressive JPEG's 640 px width from the 1/1 decode a 1200 px width kept, and a WebP's 300 px
    /// width from a whole decode (their own plans, with the coefficient buffer or libwebp's decode,
    /// reserve more); a PNG's 120 px width from the whole decode a 1000 px width kept, which needs more
    /// than its own shrink-on-load decode: the reservation grows.
    @Test(arguments: [("progressive JPEG", 1200, 640, false), ("WebP", 1000, 300, false), ("PNG", 1000, 120, true)])
    func aWidthThatWaitedIsMadeFromTheDecodeKeptMeanwhile(kind: String, wide: Int, width: Int, grows: Bool) async throws {
        let source = kind == "WebP" ? Self.webp : kind == "PNG" ? Self.png : Self.progressive
        let kept = try Self.keptDecode(of: source, width: wide)
        let own = try Self.transformer.plan(source, request: Self.request(width), choice: .fixed(.jpeg))
        let fromKept = try Self.transformer.plan(source, request: Self.request(width), choice: .fixed(.jpeg), decoded: kept)
        #expect(fromKept.usesDecodedSource && Self.transformer.looksUpKeptDecode(for: own, source: source))
        #expect((own.reservation < fromKept.reservation) == grows, "own \(own.reservation), from the kept decode \(fromKept.reservation)")

        let events = Mutex<[DecodedSourceCache.Event]>([])
        let lender = TransformMemoryBudgetTests.PeakLender()
        let pool = TransformPool(workers: 1, memoryBytes: 1 << 30, lender: lender, observe: { event in events.withLock { $0.append(event) } })
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        // The pool's one job is taken: the variant looks for a kept decode (none yet) and waits.
        let held = try await pool.memoryBudget.reserve(1 << 20, wait: .seconds(10))
        let variant = Task {
            try await pool.transform(
                source, request: Self.request(width), choice: .fixed(.jpeg), overlay: nil, with: Self.transformer, sourceIdentity: "a")
        }
        while pool.memoryBudget.waitingJobs == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(pool.decodedSources.count == 0)
        // The job ends and its decode is kept in the same step, as a job that made it would (the decode
        // lent before the waiting variant is let in: the peak from here is the decode and the variant).
        lender.resetPeak()
        pool.decodedSources.keep(kept, for: "a", endingJobOf: held)
        let encoded = try await variant.value.encoded
        #expect(try VipsImage.decode(encoded.bytes).width == width)
        // The variant may be told of its hit before the keep is counted: the job's end admits it first.
        #expect(events.withLock { $0 }.sorted { $0.rawValue < $1.rawValue } == [.hit, .kept], "made from the decode kept while it waited")
        #expect(lender.peak - kept.bytes == max(own.reservation, fromKept.reservation), "its reservation covered the resize from the decode")
        #expect(pool.memoryBudget.reservedBytes == kept.bytes && pool.memoryBudget.runningJobs == 0, "only the kept decode is held afterwards")
        pool.decodedSources.removeAll()
        #expect(pool.memoryBudget.reservedBytes == 0)
    }
}
