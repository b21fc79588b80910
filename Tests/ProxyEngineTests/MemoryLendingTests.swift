import Foundation
import NIOCore
import Synchronization
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// The memory tier lends its budget to running transforms: it holds less while they hold memory, so
/// cache and transforms together stay near the tier's budget.
@Suite struct MemoryLendingTests {
    private func variant(_ size: Int) -> CachedVariant {
        CachedVariant(
            body: ByteBuffer(repeating: 1, count: size), contentType: "image/jpeg", etag: "\"e\"", expiresAt: 0,
            storable: true, sourceKey: "s")
    }

    @Test func aLoanEvictsTheLeastRecentlyUsedUpToTheWholeBudget() {
        let cache = MemoryCache(capacityBytes: 100_000)
        for index in 0..<9 { cache.insert(variant(8_000), for: VariantKey(hashing: "\(index)")) }
        let full = cache.usage.bytes
        #expect(full > 70_000 && cache.usage.entries == 9)
        _ = cache.value(for: VariantKey(hashing: "0"))  // the oldest, used again: kept

        cache.lend(40_000)
        #expect(cache.lentBytes == 40_000)
        #expect(cache.usage.bytes <= 60_000, "holds the budget less the loan: \(cache.usage.bytes)")
        #expect(cache.value(for: VariantKey(hashing: "0")) != nil && cache.value(for: VariantKey(hashing: "8")) != nil)
        #expect(cache.value(for: VariantKey(hashing: "1")) == nil, "the least recently used went first")
        // New entries while the loan runs stay under the lowered limit.
        for index in 9..<20 {
            cache.insert(variant(8_000), for: VariantKey(hashing: "\(index)"))
            #expect(cache.usage.bytes <= 60_000)
        }

        // Loans up to the whole budget empty the tier (the variants stay on disk); beyond it, nothing more.
        cache.lend(200_000)
        #expect(cache.lentBytes == 240_000 && cache.usage.bytes == 0, "\(cache.usage.bytes)")
        cache.insert(variant(8_000), for: VariantKey(hashing: "while lent"))
        #expect(cache.usage.entries == 1, "only the entry just made is held while the whole budget is lent")
        cache.insert(variant(8_000), for: VariantKey(hashing: "while lent, next"))
        #expect(cache.usage.entries == 1 && cache.value(for: VariantKey(hashing: "while lent")) == nil)
        cache.takeBack(200_000)
        cache.takeBack(40_000)
        #expect(cache.lentBytes == 0)
        for index in 20..<40 { cache.insert(variant(8_000), for: VariantKey(hashing: "\(index)")) }
        #expect(cache.usage.bytes > 70_000, "the whole budget again once the loans are back")
    }

    /// Records what it is lent.
    final class RecordingLender: TransformMemoryLender {
        let events = Mutex<[Int]>([])
        func lend(_ bytes: Int) { events.withLock { $0.append(bytes) } }
        func takeBack(_ bytes: Int) { events.withLock { $0.append(-bytes) } }
    }

    @Test func aTransformLendsItsReservationWhileItRunsAndGivesItBack() async throws {
        let lender = RecordingLender()
        let transformer = ImageTransformer(
            maxSourcePixels: 50_000_000, maxFrames: 1, maxTransformMilliseconds: 0, encoding: EncodingSettings())
        let pool = TransformPool(workers: 1, memoryBytes: 64 << 20, lender: lender)
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        let source = try TestImages.gradient(width: 1200, height: 800).encoded(as: .png).bytes
        let request = try ImageRequest(
            query: [("url", "http://example.com/a.png"), ("w", "100"), ("format", "jpeg")], limits: .init(maxDimension: 4096))
        let encoded = try await pool.transform(source, request: request, choice: .fixed(.jpeg), overlay: nil, with: transformer).encoded
        #expect(try VipsImage.decode(encoded.bytes).width == 100)
        let events = lender.events.withLock { $0 }
        #expect(events.count == 2, "\(events)")
        // A 1200x800 PNG is decoded whole: its estimate is at least two RGBA frames of it.
        #expect(events.first.map { $0 >= 2 * 4 * 1200 * 800 } == true && events.last == -events[0])
    }
}
