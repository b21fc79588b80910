import Foundation
import Synchronization
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// One decode for a srcset (#34): whole decodes kept inside the transform memory budget, given back
/// before a transform waits, never shared between different bytes.
@Suite(.timeLimit(.minutes(1))) struct DecodedSourceCacheTests {
    /// A real whole decode of a `width`×`height` PNG, as a transform hands it back.
    static func decode(width: Int, height: Int) throws -> DecodedSource {
        let png = try TestImages.gradient(width: width, height: height).encoded(as: .png).bytes
        return try DecodedSource.decoding(png, deadline: nil)
    }

    static func settings(capacity: Int, lifetime: Duration = .seconds(20)) -> DecodedSourceCache.Settings {
        var settings = DecodedSourceCache.Settings()
        settings.capacity = capacity
        settings.lifetime = lifetime
        return settings
    }

    @Test func aKeptDecodeIsFoundOnlyUnderItsOwnIdentity() throws {
        let budget = TransformMemoryBudget(capacity: 10 << 20)
        let cache = DecodedSourceCache(settings: Self.settings(capacity: 8 << 20), budget: budget)
        let decoded = try Self.decode(width: 300, height: 200)
        #expect(decoded.bytes == 300 * 200 * 3)
        cache.keep(decoded, for: "source-a|\"1000-1\"")
        #expect(budget.reservedBytes == decoded.bytes, "a kept decode holds its bytes in the budget")
        #expect(cache.lease("source-a|\"1000-2\"") == nil, "another fetch of the same source is other bytes")
        #expect(cache.lease("source-b|\"1000-1\"") == nil)
        let lease = try #require(cache.lease("source-a|\"1000-1\""))
        #expect(lease.source === decoded)
        lease.end()
        cache.removeAll()
        #expect(budget.reservedBytes == 0 && cache.count == 0)
    }

    @Test func theIdentityFollowsTheBytesAndOnlyPNGGIFWebPAndJPEGHaveOne() throws {
        let red = try TestImages.solid(width: 60, height: 40, red: 255, green: 0, blue: 0).encoded(as: .png).bytes
        let blue = try TestImages.solid(width: 60, height: 40, red: 0, green: 0, blue: 255).encoded(as: .png).bytes
        #expect(red.count == blue.count, "same size: only the hash tells them apart")
        let first = DecodedSourceCache.identity(sourceKey: "k", bytes: red)
        #expect(first != nil && first == DecodedSourceCache.identity(sourceKey: "k", bytes: red))
        #expect(first != DecodedSourceCache.identity(sourceKey: "k", bytes: blue))
        #expect(first != DecodedSourceCache.identity(sourceKey: "other", bytes: red))
        #expect(DecodedSourceCache.identity(sourceKey: "k", bytes: try TestImages.jpeg(width: 60, height: 40)) != nil)
        #expect(DecodedSourceCache.identity(sourceKey: "k", bytes: try TestImages.heic(TestImages.gradient(width: 64, height: 64))) == nil)
        #expect(DecodedSourceCache.identity(sourceKey: "k", bytes: Array("not an image".utf8)) == nil)
        #expect(DecodedSourceCache.identity(sourceKey: "k", bytes: try TestImages.gradient(width: 60, height: 40).encoded(as: .webp).bytes) != nil)
    }

    @Test func aTransformThatNeedsTheMemoryGetsItAtOnce() async throws {
        let decoded = try Self.decode(width: 400, height: 300)  // 360,000 bytes
        let budget = TransformMemoryBudget(capacity: 1_000_000)
        let cache = DecodedSourceCache(settings: Self.settings(capacity: 1_000_000), budget: budget)
        cache.keep(decoded, for: "a")
        #expect(budget.reservedBytes == 360_000)
        // 900,000 do not fit beside the kept decode: it is given back, without waiting.
        let reserved = try await budget.reserve(900_000, wait: .milliseconds(50))
        #expect(reserved == 900_000 && budget.reservedBytes == 900_000 && cache.count == 0)
        // While the transform holds the memory, nothing more is kept.
        cache.keep(decoded, for: "b")
        #expect(cache.count == 0 && budget.reservedBytes == 900_000)
        budget.release(reserved)
        // A job larger than the whole budget needs it empty: kept decodes go too.
        cache.keep(decoded, for: "c")
        #expect(cache.count == 1)
        let large = try await budget.reserve(2_000_000, wait: .milliseconds(50))
        #expect(cache.count == 0 && budget.reservedBytes == 2_000_000)
        budget.release(large)
        #expect(budget.reservedBytes == 0)
    }

    /// A job that already waits (behind a running one) gets the kept decodes' memory when the running
    /// job ends; without that a job larger than the budget, which needs it empty, waited for their
    /// lifetime and timed out (503) under load.
    @Test func aWaitingJobGetsKeptMemoryWhenARunningJobEnds() async throws {
        let decoded = try Self.decode(width: 400, height: 300)  // 360,000 bytes
        let budget = TransformMemoryBudget(capacity: 1_000_000)
        let cache = DecodedSourceCache(settings: Self.settings(capacity: 1_000_000), budget: budget)
        let running = try await budget.reserve(500_000, wait: .zero)
        cache.keep(decoded, for: "a")
        #expect(budget.reservedBytes == 860_000)
        let large = Task { try await budget.reserve(2_000_000, wait: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(cache.count == 0, "asked before it waited: the unused decode went back")
        cache.keep(decoded, for: "b")
        #expect(cache.count == 0, "nothing is kept while a job waits")
        budget.release(running)
        #expect(try await large.value == 2_000_000)
        budget.release(2_000_000)
        // Kept while a job ran, then a job waits for what the running one and the decode hold.
        let first = try await budget.reserve(500_000, wait: .zero)
        cache.keep(decoded, for: "c")
        let lease = try #require(cache.lease("c"))
        let second = Task { try await budget.reserve(700_000, wait: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(budget.reservedBytes == 860_000, "in use: the decode stays while the job waits")
        lease.end()
        budget.release(first)
        #expect(try await second.value == 700_000)
        #expect(budget.reservedBytes == 700_000 && cache.count == 0, "700,000 did not fit beside the decode")
        budget.release(700_000)
    }

    /// A kept decode in use when a job starts waiting cannot go then; it goes as soon as its last use
    /// ends, with no running job's end needed to ask for it again (the srcset benchmark's other stall: a
    /// job larger than the budget waited beside an unused decode until it timed out).
    @Test func aDecodeInUseWhenAJobStartsWaitingGoesWhenItsUseEnds() async throws {
        let decoded = try Self.decode(width: 400, height: 300)  // 360,000 bytes
        let budget = TransformMemoryBudget(capacity: 1_000_000)
        let cache = DecodedSourceCache(settings: Self.settings(capacity: 1_000_000), budget: budget)
        cache.keep(decoded, for: "a")
        let lease = try #require(cache.lease("a"))
        let large = Task { try await budget.reserve(2_000_000, wait: .seconds(3)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(cache.count == 1 && budget.reservedBytes == 360_000, "in use: it stays while the job waits")
        lease.end()
        #expect(try await large.value == 2_000_000, "given back when its use ended")
        #expect(cache.count == 0 && budget.reservedBytes == 2_000_000)
        budget.release(2_000_000)
    }

    /// A job that would use a kept decode while the budget is taken does not wait holding it: a job
    /// larger than the budget, queued after it, needs the budget empty and would wait for that decode,
    /// while the first waited behind the large one (both timed out: the srcset benchmark's stall). It
    /// decodes itself instead, and both finish once the memory they wait for is given back.
    @Test func aJobNeverWaitsForMemoryWhileItHoldsAKeptDecode() async throws {
        let budget = 48 << 20
        let pool = TransformPool(workers: 2, memoryBytes: budget, decodedSources: Self.settings(capacity: 32 << 20))
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, maxTransformMilliseconds: 4000, encoding: EncodingSettings())
        func request(_ width: Int) throws -> ImageRequest {
            try ImageRequest(query: [("url", "http://example.com/a.png"), ("w", String(width))], limits: .init(maxDimension: 4096))
        }
        let small = try TestImages.gradient(width: 1000, height: 800).encoded(as: .png).bytes
        let identity = try #require(DecodedSourceCache.identity(sourceKey: "small", bytes: small))
        _ = try await pool.transform(small, request: try request(500), choice: .fixed(.jpeg), overlay: nil, with: transformer, sourceIdentity: identity)
        #expect(pool.decodedSources.count == 1, "the first width's decode is kept")
        // A running job (here: a reservation held outside the pool) takes most of the budget.
        let running = try await pool.memoryBudget.reserve(budget - pool.decodedSources.heldBytes - (1 << 20), wait: .zero)
        let second = Task {
            try await pool.transform(small, request: try request(400), choice: .fixed(.jpeg), overlay: nil, with: transformer, sourceIdentity: identity)
        }
        try await Task.sleep(for: .milliseconds(150))
        let large = try TestImages.gradient(width: 4000, height: 3000).encoded(as: .png).bytes
        let largePlan = try transformer.plan(large, request: try request(1000), choice: .fixed(.jpeg))
        #expect(largePlan.reservation > budget, "larger than the budget: it runs alone")
        let third = Task { try await pool.transform(large, request: try request(1000), choice: .fixed(.jpeg), overlay: nil, with: transformer) }
        try await Task.sleep(for: .milliseconds(150))
        pool.memoryBudget.release(running)
        let (made, _) = try await second.value
        let (alone, _) = try await third.value
        #expect(try VipsImage.decode(made.bytes).width == 400)
        #expect(try VipsImage.decode(alone.bytes).width == 1000)
    }

    @Test func aDecodeInUseIsGivenBackOnlyWhenItsTransformEnds() async throws {
        let decoded = try Self.decode(width: 400, height: 300)
        let budget = TransformMemoryBudget(capacity: 1_000_000)
        let cache = DecodedSourceCache(settings: Self.settings(capacity: 1_000_000), budget: budget)
        cache.keep(decoded, for: "a")
        let lease = try #require(cache.lease("a"))
        // Asked for memory, the cache cannot give back what a transform reads.
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(900_000, wait: .milliseconds(50)) }
        #expect(budget.reservedBytes == 360_000)
        lease.end()
        lease.end()  // only the first end counts
        let reserved = try await budget.reserve(900_000, wait: .milliseconds(50))
        #expect(budget.reservedBytes == 900_000)
        budget.release(reserved)
        // Removed while in use: unfindable at once, its bytes back when its user is done.
        cache.keep(decoded, for: "b")
        let user = try #require(cache.lease("b"))
        cache.removeAll()
        #expect(cache.count == 1, "in use: not removed")
        user.end()
        cache.removeAll()
        #expect(cache.count == 0 && budget.reservedBytes == 0 && cache.heldBytes == 0)
    }

    /// Random sequences of transforms through two threads' admission with kept decodes: jobs of every
    /// size (larger than the budget too) arrive, end, end keeping their decode, or take a kept decode
    /// while they run (given back after they end, as the pool does). Whenever the sequence settles, no job
    /// waits while nothing runs: kept memory that no running job reads always goes back to a waiting one.
    @Test func keptDecodesNeverLeaveAJobWaitingBesideAnIdleBudget() async throws {
        let decodes = try [(40, 30), (60, 40), (80, 50)].map { try Self.decode(width: $0.0, height: $0.1) }
        var random = SeededRandom(seed: 38)
        var (waitingSteps, keptSteps, leasesTaken) = (0, 0, 0)
        for _ in 0..<8 {
            let budget = TransformMemoryBudget(capacity: 30_000, jobs: 2)
            let cache = DecodedSourceCache(settings: Self.settings(capacity: 24_000), budget: budget)
            let admitted = AdmittedJobs()
            var leases: [Int: DecodedSourceCache.Lease] = [:]
            var tasks: [Task<Void, any Error>] = []
            var outstanding = 0
            for step in 0..<60 {
                let running = admitted.list.withLock { $0 }
                let roll = random.next(100)
                if running.isEmpty || roll < 35 {
                    let size = random.next(100)
                    let bytes = size < 60 ? 1000 + random.next(14_000) : size < 85 ? 15_000 + random.next(15_000) : 30_001 + random.next(15_000)
                    let id = step
                    tasks.append(Task {
                        let reserved = try await budget.reserve(bytes, wait: .seconds(30))
                        admitted.list.withLock { $0.append((id, reserved)) }
                    })
                    outstanding += 1
                } else if roll < 75 {
                    let (id, bytes) = admitted.list.withLock { $0.remove(at: random.next($0.count)) }
                    if roll < 55 {
                        budget.release(bytes)
                    } else {
                        cache.keep(decodes[random.next(decodes.count)], for: "source-\(random.next(4))", endingJobOf: bytes)
                    }
                    leases.removeValue(forKey: id)?.end()
                    outstanding -= 1
                } else if let job = running.first(where: { leases[$0.id] == nil }) {
                    for key in 0..<4 {
                        guard let lease = cache.lease("source-\(key)") else { continue }
                        leases[job.id] = lease
                        leasesTaken += 1
                        break
                    }
                }
                try await TransformMemoryBudgetTests.until {
                    budget.runningJobs + budget.waitingJobs == outstanding && admitted.list.withLock { $0.count } == budget.runningJobs
                }
                #expect(budget.waitingJobs == 0 || budget.runningJobs > 0, "step \(step): \(budget.waitingJobs) waiting, nothing running")
                if budget.waitingJobs > 0 && budget.runningJobs == 0 { break }
                if budget.waitingJobs > 0 { waitingSteps += 1 }
                if cache.heldBytes > 0 { keptSteps += 1 }
            }
            while outstanding > 0 {
                try await TransformMemoryBudgetTests.until { !admitted.list.withLock { $0.isEmpty } }
                let (id, bytes) = admitted.list.withLock { $0.removeFirst() }
                budget.release(bytes)
                leases.removeValue(forKey: id)?.end()
                outstanding -= 1
            }
            for task in tasks { try await task.value }
            cache.removeAll()
            #expect(budget.reservedBytes == 0 && budget.runningJobs == 0 && cache.heldBytes == 0)
        }
        // The sequences went through what they are meant to: jobs waiting, decodes kept, decodes read.
        #expect(waitingSteps >= 100 && keptSteps >= 50 && leasesTaken >= 10, "\(waitingSteps) \(keptSteps) \(leasesTaken)")
    }

    @Test func theCacheIsBoundedByItsCapacityAndItsLifetime() async throws {
        let small = try Self.decode(width: 200, height: 100)  // 60,000 bytes
        let budget = TransformMemoryBudget(capacity: 10 << 20)
        let cache = DecodedSourceCache(settings: Self.settings(capacity: 150_000, lifetime: .milliseconds(200)), budget: budget)
        cache.keep(small, for: "a")
        cache.keep(small, for: "b")
        cache.lease("a")?.end()  // "b" is now the least recently used
        cache.keep(small, for: "c")
        #expect(cache.count == 2 && cache.lease("b") == nil, "the least recently used made room")
        #expect(cache.heldBytes == 120_000 && budget.reservedBytes == 120_000)
        let tooLarge = try Self.decode(width: 400, height: 200)  // 240,000 bytes: more than the capacity
        cache.keep(tooLarge, for: "d")
        #expect(cache.lease("d") == nil)
        // Unused past its lifetime, a decode goes (the sweeper runs every half lifetime).
        try await Task.sleep(for: .milliseconds(700))
        #expect(cache.count == 0 && budget.reservedBytes == 0)
        // Off: nothing kept, nothing reserved.
        let off = DecodedSourceCache(settings: Self.settings(capacity: 0), budget: budget)
        off.keep(small, for: "a")
        #expect(!off.isEnabled && off.count == 0 && budget.reservedBytes == 0)
    }

    /// A decode that took long per byte outlives a cheaper one that was used more recently: room is made
    /// from the decode that saves least per byte (GreedyDual-Size), and an unused one still goes in time.
    @Test func roomIsMadeFromTheDecodeThatSavesLeastPerByte() throws {
        let image = try Self.decode(width: 400, height: 300).image
        let expensive = DecodedSource(image: image, decodeCost: .milliseconds(200))
        let cheap = DecodedSource(image: image, decodeCost: .milliseconds(10))
        let third = DecodedSource(image: image, decodeCost: .milliseconds(10))
        let budget = TransformMemoryBudget(capacity: 10 << 20)
        // Room for two decodes of 360,000 bytes.
        let cache = DecodedSourceCache(settings: Self.settings(capacity: 800_000), budget: budget)
        cache.keep(expensive, for: "a|1|1")
        cache.keep(cheap, for: "b|1|1")
        try #require(cache.lease("b|1|1")).end()  // the cheap one used last
        cache.keep(third, for: "c|1|1")
        let stays = cache.lease("a|1|1")
        #expect(stays != nil, "the expensive decode stays though used less recently")
        stays?.end()
        #expect(cache.lease("b|1|1") == nil, "the cheap one made room")
        #expect(cache.holdsDecode(ofSourceKey: "a") && cache.holdsDecode(ofSourceKey: "c") && !cache.holdsDecode(ofSourceKey: "b"))
        cache.removeAll()
        #expect(budget.reservedBytes == 0 && !cache.holdsDecode(ofSourceKey: "a"))
    }

    /// The transform queue asks whether a source has a decode kept by its key alone, whatever its bytes.
    @Test func aDecodeIsFoundBySourceKey() throws {
        let png = try TestImages.gradient(width: 60, height: 40).encoded(as: .png).bytes
        let identity = try #require(DecodedSourceCache.identity(sourceKey: "https://a.example/x|y.png", bytes: png))
        #expect(DecodedSourceCache.sourceKey(ofIdentity: identity) == "https://a.example/x|y.png")
        let budget = TransformMemoryBudget(capacity: 10 << 20)
        let cache = DecodedSourceCache(settings: Self.settings(capacity: 1 << 20), budget: budget)
        #expect(!cache.holdsDecode(ofSourceKey: "https://a.example/x|y.png"))
        cache.keep(try DecodedSource.decoding(png, deadline: nil), for: identity)
        #expect(cache.holdsDecode(ofSourceKey: "https://a.example/x|y.png"))
        #expect(!cache.holdsDecode(ofSourceKey: "https://a.example/x"))
        cache.removeAll()
    }
}

/// The jobs admitted and not ended yet (an id and the bytes reserved), as the tasks that waited report them.
private final class AdmittedJobs: Sendable {
    let list = Mutex<[(id: Int, bytes: Int)]>([])

}
