import CVipsShim
import Foundation
import Synchronization
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// `image.maxTransformBytes` at the transform pool's admission: transforms reserve their estimated working
/// set before they take a thread, and the process's peak memory stays within what they reserved.
@Suite(.timeLimit(.minutes(1))) struct TransformMemoryBudgetTests {
    @Test func reservationsWaitForMemory() async throws {
        let budget = TransformMemoryBudget(capacity: 100)
        let first = try await budget.reserve(70, wait: .milliseconds(10))
        #expect(budget.reservedBytes == 70)
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(40, wait: .milliseconds(50)) }
        #expect(budget.reservedBytes == 70, "a reservation that timed out holds nothing")
        // Released by another task while this one waits: the wait ends with the reservation.
        Task {
            try await Task.sleep(for: .milliseconds(100))
            budget.release(first)
        }
        let second = try await budget.reserve(40, wait: .seconds(5))
        #expect(budget.reservedBytes == 40)
        budget.release(second)
        #expect(budget.reservedBytes == 0)
        #expect(try await TransformMemoryBudget(capacity: 0).reserve(1 << 40, wait: .zero) == 0, "0: no budget")
    }

    /// A large job (a heavy transform's working set) does not hold every small one back (issue #56): while
    /// it runs, small jobs overdraw the budget by a quarter at most; without it they wait as before.
    @Test func smallJobsOverdrawABudgetThatALargeJobHolds() async throws {
        let budget = TransformMemoryBudget(capacity: 800)
        let large = try await budget.reserve(780, wait: .zero)
        let small = try await budget.reserve(150, wait: .zero)
        #expect(budget.reservedBytes == 930, "a small job beside the large one")
        // The overdraft is a quarter (200): 930 + 100 passes it; a job above a quarter is not small.
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(100, wait: .milliseconds(20)) }
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(250, wait: .milliseconds(20)) }
        budget.release(small)
        budget.release(large)
        // A job larger than the whole budget runs alone, but for small jobs within the overdraft.
        let huge = try await budget.reserve(1_000, wait: .zero)
        let beside = try await budget.reserve(190, wait: .zero)
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(20, wait: .milliseconds(20)) }
        budget.release(beside)
        budget.release(huge)
        // Without a large job, the budget is the budget: two medium jobs fill it, a small one waits.
        let first = try await budget.reserve(390, wait: .zero), second = try await budget.reserve(390, wait: .zero)
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(30, wait: .milliseconds(20)) }
        budget.release(first)
        budget.release(second)
        #expect(budget.reservedBytes == 0)
    }

    @Test func aJobLargerThanTheBudgetRunsAloneAndIsNotStarved() async throws {
        let budget = TransformMemoryBudget(capacity: 100)
        // Alone, it runs at once, and nothing else is admitted beside it but small jobs within the overdraft
        // (a quarter of the budget: 25 here; ``smallJobsOverdrawABudgetThatALargeJobHolds()``).
        let large = try await budget.reserve(150, wait: .milliseconds(10))
        #expect(large == 150 && budget.reservedBytes == 150)
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(26, wait: .milliseconds(50)) }
        let small25 = try await budget.reserve(25, wait: .zero)
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(1, wait: .milliseconds(50)) }
        budget.release(small25)
        budget.release(large)
        // Behind a running small job it waits for the budget to empty; while it waits, small jobs that
        // would still fit are held back, so it is not starved.
        let small = try await budget.reserve(30, wait: .milliseconds(10))
        let waiting = Task { try await budget.reserve(150, wait: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(budget.reservedBytes == 30, "waits while a small job holds memory")
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(30, wait: .milliseconds(100)) }
        budget.release(small)
        #expect(try await waiting.value == 150 && budget.reservedBytes == 150)
        budget.release(150)
        // A large job that gives up waiting lets the small jobs it held back go.
        let holder = try await budget.reserve(60, wait: .milliseconds(10))
        let givesUp = Task { try await budget.reserve(150, wait: .milliseconds(100)) }
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await budget.reserve(30, wait: .seconds(2)) == 30)
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await givesUp.value }
        budget.release(holder)
        budget.release(30)
        #expect(budget.reservedBytes == 0)
    }

    @Test func aCancelledWaiterLeavesAndHoldsNothing() async throws {
        let budget = TransformMemoryBudget(capacity: 100)
        let holder = try await budget.reserve(90, wait: .zero)
        let waiting = Task { try await budget.reserve(50, wait: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        budget.release(holder)
        #expect(budget.reservedBytes == 0)
    }

    @Test func aRunningJobGrowsOnlyIntoWhatIsFree() async throws {
        let budget = TransformMemoryBudget(capacity: 100)
        let job = try await budget.reserve(20, wait: .zero)
        let other = try await budget.reserve(50, wait: .zero)
        #expect(budget.tryGrow(from: job, to: 50) && budget.reservedBytes == 100)
        #expect(!budget.tryGrow(from: 50, to: 51), "nothing free")
        #expect(!budget.tryGrow(from: 50, to: 150), "larger than the budget: only alone")
        budget.release(other)
        #expect(budget.tryGrow(from: 50, to: 150) && budget.reservedBytes == 150, "alone, it may")
        budget.release(150)
        #expect(budget.reservedBytes == 0)
    }

    /// No pool thread waits for memory: with the budget taken, a queued transform waits at the pool's
    /// admission while the pool's only thread stays free for other work.
    @Test func aTransformWaitsForMemoryBeforeItTakesAThread() async throws {
        let pool = TransformPool(workers: 1, memoryBytes: 50 << 20)
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        let holder = try await pool.memoryBudget.reserve(50 << 20, wait: .zero)
        let source = try TestImages.gradient(width: 400, height: 300).encoded(as: .png).bytes
        let request = try ImageRequest(query: [("url", "http://example.com/a.png"), ("w", "100")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, maxTransformMilliseconds: 5000, encoding: EncodingSettings())
        let waiting = Task { try await pool.transform(source, request: request, choice: .fixed(.jpeg), overlay: nil, with: transformer) }
        try await Task.sleep(for: .milliseconds(100))
        // The pool's one thread answers at once: the waiting transform does not hold it.
        let ran = try await pool.run { 42 }
        #expect(ran == 42)
        pool.memoryBudget.release(holder)
        let (encoded, _) = try await waiting.value
        #expect(try VipsImage.decode(encoded.bytes).width == 100)
        #expect(pool.memoryBudget.reservedBytes == 0)
    }

    /// Memory is reserved only once a thread is free: a transform queued behind the pool's busy thread
    /// holds none of the budget and borrows nothing from the memory tier, so kept decodes and cached
    /// variants are not given up for jobs that cannot run yet.
    @Test func aTransformWaitingForAThreadHoldsNoMemory() async throws {
        let lender = PeakLender()
        let pool = TransformPool(workers: 1, memoryBytes: 1 << 30, lender: lender)
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        // A job of no memory holds the pool's one thread.
        let busy = try await pool.memoryBudget.reserve(0, wait: .zero)
        #expect(pool.memoryBudget.runningJobs == 1)
        let source = try TestImages.gradient(width: 400, height: 300).encoded(as: .png).bytes
        let request = try ImageRequest(query: [("url", "http://example.com/a.png"), ("w", "100")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, maxTransformMilliseconds: 5000, encoding: EncodingSettings())
        let waiting = Task { try await pool.transform(source, request: request, choice: .fixed(.jpeg), overlay: nil, with: transformer) }
        try await Task.sleep(for: .milliseconds(150))
        #expect(pool.memoryBudget.reservedBytes == 0, "no reservation while no thread is free")
        #expect(lender.peak == 0, "nothing borrowed from the memory tier yet")
        pool.memoryBudget.release(busy)
        let (encoded, _) = try await waiting.value
        #expect(try VipsImage.decode(encoded.bytes).width == 100)
        #expect(lender.peak > 0, "reserved (and borrowed) once it had its thread")
        #expect(pool.memoryBudget.reservedBytes == 0 && pool.memoryBudget.runningJobs == 0)
    }

    /// The budget hands out the threads too: a job waits for one while memory is free.
    @Test func jobsAreAdmittedOnlyWhileAThreadIsFree() async throws {
        let budget = TransformMemoryBudget(capacity: 100, jobs: 1)
        let first = try await budget.reserve(10, wait: .zero)
        await #expect(throws: ImagingError.memoryBudgetBusy) { try await budget.reserve(10, wait: .milliseconds(50)) }
        #expect(budget.reserveIfAdmissible(10) == nil, "no thread: not at once either")
        let second = Task { try await budget.reserve(10, wait: .seconds(5)) }
        try await Self.until { budget.waitingJobs == 1 }
        #expect(budget.reservedBytes == 10 && budget.runningJobs == 1)
        budget.release(first)
        #expect(try await second.value == 10)
        #expect(budget.runningJobs == 1)
        budget.release(10)
        #expect(budget.reservedBytes == 0 && budget.runningJobs == 0)
    }

    /// A job that fits uses a free thread while an earlier one waits for memory (the srcset benchmark
    /// used 1.6 of 2 cores when the job holding the second thread waited for memory), but it may pass a
    /// waiting job only `2 × jobs` times; then the later ones wait behind it.
    @Test func aJobThatFitsGoesBeforeOneThatWaitsForMemoryAFewTimes() async throws {
        let budget = TransformMemoryBudget(capacity: 100, jobs: 2)
        #expect(budget.overtakesAllowed == 4)
        let large = try await budget.reserve(70, wait: .zero)
        let waiting = Task { try await budget.reserve(60, wait: .seconds(5)) }
        try await Self.until { budget.waitingJobs == 1 }
        #expect(budget.runningJobs == 1, "60 does not fit beside 70")
        for _ in 0..<4 {
            let small = try await budget.reserve(20, wait: .milliseconds(100))
            #expect(small == 20 && budget.runningJobs == 2, "20 fits beside 70 on the free thread")
            budget.release(small)
        }
        // Passed four times: a fifth small job waits behind it.
        let fifth = Task { try await budget.reserve(20, wait: .seconds(5)) }
        try await Self.until { budget.waitingJobs == 2 }
        #expect(budget.runningJobs == 1 && budget.reservedBytes == 70)
        budget.release(large)
        #expect(try await waiting.value == 60)
        #expect(try await fifth.value == 20, "then it fits beside the waiting one")
        #expect(budget.runningJobs == 2 && budget.reservedBytes == 80)
        budget.release(60)
        budget.release(20)
        #expect(budget.reservedBytes == 0 && budget.runningJobs == 0)
    }

    /// A job larger than the budget that starts waiting behind one that has been passed the most times
    /// holds back only the jobs behind it: once the budget empties the first goes, then the large one.
    /// (Both used to wait: the first held back by the large one, the large one not allowed to pass the
    /// first, every transform waiting out its time limit with the budget empty; `srcset` on the Plasma
    /// corpus answered 503s after 10 s stalls.)
    @Test func aLargeJobWaitingBehindAPassedOneHoldsOnlyTheJobsBehindIt() async throws {
        let budget = TransformMemoryBudget(capacity: 100, jobs: 2)
        let running = try await budget.reserve(70, wait: .zero)
        let first = Task { try await budget.reserve(60, wait: .seconds(5)) }
        try await Self.until { budget.waitingJobs == 1 }
        for _ in 0..<budget.overtakesAllowed {
            budget.release(try await budget.reserve(20, wait: .zero))
        }
        let large = Task { try await budget.reserve(150, wait: .seconds(5)) }
        try await Self.until { budget.waitingJobs == 2 }
        await #expect(throws: ImagingError.memoryBudgetBusy, "behind the large one") { try await budget.reserve(10, wait: .milliseconds(50)) }
        budget.release(running)
        #expect(try await first.value == 60, "the first goes as soon as the budget has room")
        #expect(budget.runningJobs == 1 && budget.waitingJobs == 1, "the large one waits for the budget to empty")
        budget.release(60)
        #expect(try await large.value == 150)
        budget.release(150)
        #expect(budget.reservedBytes == 0 && budget.runningJobs == 0 && budget.waitingJobs == 0)
    }

    /// Random sequences of arrivals (small, near the budget, larger than it) and releases through two
    /// threads' admission: whenever the arrivals and releases have settled, no job waits while nothing
    /// runs (with no kept memory, an idle budget admits any job: a job left waiting there would wait out
    /// its time limit, as the deadlock fixed above did).
    @Test func noSequenceLeavesAJobWaitingBesideAnIdleBudget() async throws {
        var random = SeededRandom(seed: 34)
        var (waitingSteps, largeArrivals) = (0, 0)
        for _ in 0..<12 {
            let budget = TransformMemoryBudget(capacity: 100, jobs: 2)
            let admitted = AdmittedBytes()
            var tasks: [Task<Void, any Error>] = []
            var outstanding = 0
            for step in 0..<60 {
                let held = admitted.list.withLock { $0 }
                if held.isEmpty || random.next(100) < 55 {
                    let roll = random.next(100)
                    let bytes = roll < 65 ? 5 + random.next(55) : roll < 88 ? 60 + random.next(41) : 101 + random.next(50)
                    if bytes > 100 { largeArrivals += 1 }
                    tasks.append(Task {
                        let reserved = try await budget.reserve(bytes, wait: .seconds(30))
                        admitted.list.withLock { $0.append(reserved) }
                    })
                    outstanding += 1
                } else {
                    let index = random.next(held.count)
                    let bytes = admitted.list.withLock { $0.remove(at: index) }
                    budget.release(bytes)
                    outstanding -= 1
                }
                // Settled: every job outstanding is running or waiting, and every admitted one counted.
                try await Self.until {
                    budget.runningJobs + budget.waitingJobs == outstanding && admitted.list.withLock { $0.count } == budget.runningJobs
                }
                #expect(budget.waitingJobs == 0 || budget.runningJobs > 0, "step \(step): \(budget.waitingJobs) waiting, nothing running")
                if budget.waitingJobs > 0 && budget.runningJobs == 0 { break }
                if budget.waitingJobs > 1 { waitingSteps += 1 }
            }
            // Drain: release whatever runs until everything has run.
            while outstanding > 0 {
                try await Self.until { !admitted.list.withLock { $0.isEmpty } }
                budget.release(admitted.list.withLock { $0.removeFirst() })
                outstanding -= 1
            }
            for task in tasks { try await task.value }
            #expect(budget.reservedBytes == 0 && budget.runningJobs == 0 && budget.waitingJobs == 0)
        }
        // The sequences went through what they are meant to: queues of waiting jobs, large ones among them.
        #expect(waitingSteps >= 100 && largeArrivals >= 30, "\(waitingSteps) \(largeArrivals)")
    }


    /// Kept memory (decodes kept for later) is no job: it takes no thread, and it is refused when it
    /// would leave the next waiting job short.
    @Test func keptMemoryTakesNoThreadAndLeavesRoomForTheNextJob() async throws {
        let budget = TransformMemoryBudget(capacity: 100, jobs: 1)
        #expect(budget.tryReserve(30) && budget.runningJobs == 0)
        let job = try await budget.reserve(40, wait: .zero)
        let next = Task { try await budget.reserve(40, wait: .seconds(5)) }
        try await Self.until { budget.waitingJobs == 1 }
        // 30 kept + 40 running + 40 waiting: keeping 10 more would leave the waiting job short.
        #expect(!budget.tryReserve(10), "the waiting job would not fit beside it")
        budget.giveBack(30)
        #expect(budget.tryReserve(10), "100 - 40 running - 40 waiting = 20 free")
        #expect(budget.runningJobs == 1, "giving kept memory back ends no job")
        budget.release(job)
        #expect(try await next.value == 40)
        budget.release(40)
        budget.giveBack(10)
        #expect(budget.reservedBytes == 0 && budget.runningJobs == 0)
    }

    /// Through the pool with two threads: while one transform holds most of the memory and a large one
    /// waits for it, a small transform runs on the second thread instead of queueing behind the large one.
    @Test func aSmallTransformRunsWhileALargeOneWaitsForMemory() async throws {
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, maxTransformMilliseconds: 5000, encoding: EncodingSettings())
        let smallSource = try TestImages.gradient(width: 400, height: 300).encoded(as: .png).bytes
        let largeSource = try TestImages.gradient(width: 3000, height: 2000).encoded(as: .png).bytes
        let small = try ImageRequest(query: [("url", "http://example.com/s.png"), ("w", "100")], limits: .init(maxDimension: 4096))
        let large = try ImageRequest(query: [("url", "http://example.com/l.png"), ("w", "2000")], limits: .init(maxDimension: 4096))
        let smallBytes = try transformer.plan(smallSource, request: small, choice: .fixed(.jpeg), overlay: nil).reservation
        let largeBytes = try transformer.plan(largeSource, request: large, choice: .fixed(.jpeg), overlay: nil).reservation
        #expect(largeBytes > 2 * smallBytes)
        let capacity = largeBytes + smallBytes
        let pool = TransformPool(workers: 2, memoryBytes: capacity)
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        // One thread's job holds all but the small transform's memory (and a little more).
        let holder = try await pool.memoryBudget.reserve(capacity - smallBytes - 1024, wait: .zero)
        let waiting = Task { try await pool.transform(largeSource, request: large, choice: .fixed(.jpeg), overlay: nil, with: transformer) }
        try await Self.until { pool.memoryBudget.waitingJobs == 1 }
        let (encoded, _) = try await pool.transform(smallSource, request: small, choice: .fixed(.jpeg), overlay: nil, with: transformer)
        #expect(try VipsImage.decode(encoded.bytes).width == 100)
        #expect(pool.memoryBudget.runningJobs == 1, "the large one still waits")
        pool.memoryBudget.release(holder)
        #expect(try VipsImage.decode(try await waiting.value.encoded.bytes).width == 2000)
        #expect(pool.memoryBudget.reservedBytes == 0 && pool.memoryBudget.runningJobs == 0)
    }

    /// A variant that waited for the thread behind its source's first whole decode is made from that
    /// decode: the decode is kept in the same step as the first job ends, before the waiting one is
    /// admitted, and the waiting one looks for it once admitted.
    @Test func aTransformThatWaitedBehindItsSourcesFirstDecodeUsesIt() async throws {
        let events = Mutex<[DecodedSourceCache.Event]>([])
        var settings = DecodedSourceCache.Settings()
        settings.capacity = 256 << 20
        let pool = TransformPool(workers: 1, memoryBytes: 1 << 30, decodedSources: settings, observe: { event in events.withLock { $0.append(event) } })
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, maxTransformMilliseconds: 5000, encoding: EncodingSettings())
        let source = try TestImages.noise(width: 2400, height: 1600, bands: 3).encoded(as: .png).bytes
        func request(_ width: Int) throws -> ImageRequest {
            try ImageRequest(query: [("url", "http://example.com/a.png"), ("w", String(width))], limits: .init(maxDimension: 4096))
        }
        let (wide, narrow) = (try request(1600), try request(800))
        let first = Task {
            try await pool.transform(source, request: wide, choice: .fixed(.jpeg), overlay: nil, with: transformer, sourceIdentity: "a")
        }
        try await Self.until { pool.memoryBudget.runningJobs == 1 }
        let second = Task {
            try await pool.transform(source, request: narrow, choice: .fixed(.jpeg), overlay: nil, with: transformer, sourceIdentity: "a")
        }
        try await Self.until { pool.memoryBudget.waitingJobs == 1 }
        #expect(try VipsImage.decode(try await first.value.encoded.bytes).width == 1600)
        #expect(try VipsImage.decode(try await second.value.encoded.bytes).width == 800)
        // (The hit may be counted before the keep: the waiting job runs as soon as the keep is in place.)
        let counted = events.withLock { $0 }
        #expect(counted.filter { $0 == .kept }.count == 1 && counted.filter { $0 == .hit }.count == 1 && counted.count == 2,
                "the waiting variant was made from the first one's decode: \(counted)")
        pool.decodedSources.removeAll()
        #expect(pool.memoryBudget.reservedBytes == 0 && pool.memoryBudget.runningJobs == 0)
    }

    /// Waits (up to 10 s) until `condition` holds: a task started to wait has queued.
    static func until(_ condition: () -> Bool) async throws {
        for _ in 0..<1000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        try #require(condition())
    }

    /// A transform through a one-thread pool whose 1 GiB budget lends to `lender`, as the service runs it.
    static func transform(
        _ source: [UInt8], _ request: ImageRequest, _ choice: FormatChoice, _ transformer: ImageTransformer,
        lender: any TransformMemoryLender
    ) async throws -> EncodedImage {
        let pool = TransformPool(workers: 1, memoryBytes: 1 << 30, lender: lender)
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        return try await pool.transform(source, request: request, choice: choice, overlay: nil, with: transformer).encoded
    }

    /// A transform through the pool (``transform(_:_:_:_:lender:)``) with the process's peak RSS reset
    /// before it (Linux: writing 5 to clear_refs resets VmHWM): the result, what the process grew by, and
    /// the most the budget lent at once.
    static func measured(
        _ source: [UInt8], _ request: ImageRequest, _ choice: FormatChoice, _ transformer: ImageTransformer,
        releasingFreeMemory: Bool = true
    ) async throws -> (encoded: EncodedImage, growth: Int, reserved: Int) {
        let lender = PeakLender()
        let pool = TransformPool(workers: 1, memoryBytes: 1 << 30, lender: lender)
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        // The pool's thread is started (its stack and its malloc arena) before the peak is reset: what is
        // measured is the transform, not the thread.
        _ = try await pool.run { 0 }
        if releasingFreeMemory { _ = Vips.releaseFreeMemory() }
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = try statusKilobytes("VmRSS") * 1024
        let encoded = try await pool.transform(source, request: request, choice: choice, overlay: nil, with: transformer).encoded
        let peak = try statusKilobytes("VmHWM") * 1024
        return (encoded, peak - before, lender.peak)
    }

    /// Records the most lent at once.
    final class PeakLender: TransformMemoryLender {
        private let state = Mutex<(now: Int, peak: Int)>((0, 0))
        var peak: Int { state.withLock { $0.peak } }
        func lend(_ bytes: Int) { state.withLock { $0.now += bytes; $0.peak = max($0.peak, $0.now) } }
        /// Starts a new peak from what is lent now.
        func resetPeak() { state.withLock { $0.peak = $0.now } }
        func takeBack(_ bytes: Int) { state.withLock { $0.now -= bytes } }
    }

    /// Kilobytes of a `/proc/self/status` field.
    static func statusKilobytes(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        let number = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
        return try #require(Int(number))
    }

    /// Issue #29: a 6000×6000 4:4:4 progressive file whose frame header looks DC-decodable, but which the
    /// DC decoder declines (an Adobe segment with transform 0: RGB-coded), reserved ~5 MB and then libjpeg
    /// allocated its ~216 MB coefficient buffer. The reservation now covers the decoder that runs.
    @Test func aFileTheDCDecoderDeclinesReservesWhatLibjpegAllocates() async throws {
        let small = try TestImages.gradient(width: 300, height: 300)
        let large = try small.producingForTests { ipx_vips_thumbnail_image($0, $1, 6000, 6000, 3, -1, 0) }
            .producingForTests { ipx_vips_copy_memory($0, $1) }
        let plain = try TestImages.jpeg(large, progressive: true, subsample: false, keepMetadata: false)
        let adobe: [UInt8] = [0xFF, 0xEE, 0x00, 0x0E] + Array("Adobe".utf8) + [0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00]
        let declined = Array(plain[..<2]) + adobe + Array(plain[2...])
        let header = try SourceHeader(reading: declined)
        #expect(header.jpegEighthDecodable, "the frame header looks like the DC decoder's kind")
        #expect(JPEGEighthDecoder.image(declined) == nil, "but the decoder declines it")
        let request = try ImageRequest(query: [("url", "http://example.com/a.jpg"), ("w", "300")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())
        let (encoded, growth, reserved) = try await Self.measured(
            declined, request, .fixed(.jpeg), transformer, releasingFreeMemory: false)
        #expect(try VipsImage.decode(encoded.bytes).width == 300)
        #expect(reserved >= header.jpegCoefficientBytes, "reserved \(reserved), libjpeg's buffer \(header.jpegCoefficientBytes)")
        #expect(growth <= reserved, "RSS grew \(growth) bytes, reserved \(reserved)")
        // The same file without the Adobe segment is made from its DC scans under the small reservation.
        let dcLender = PeakLender()
        _ = try await Self.transform(plain, request, .fixed(.jpeg), transformer, lender: dcLender)
        #expect(dcLender.peak < header.jpegCoefficientBytes / 10, "DC path reserved \(dcLender.peak)")
    }

    /// Issue #29: encoders were outside the budget (one 2164 px AVIF raised RSS by hundreds of MB). Each
    /// transform now reserves its encoder's working set too: the peak RSS growth stays within it.
    @Test(arguments: [OutputFormat.avif, .gif, .webp, .png, .jpeg, .jxl])
    func everyEncoderIsInsideItsReservation(format: OutputFormat) async throws {
        if format == .jxl { Vips.allowJXLInput() }  // to decode the result
        let small = try TestImages.gradient(width: 256, height: 256)
        let large = try small.producingForTests { ipx_vips_thumbnail_image($0, $1, 2048, 2048, 3, -1, 0) }
            .producingForTests { ipx_vips_copy_memory($0, $1) }
        let source = try large.encoded(as: .jpeg, quality: 85).bytes
        let request = try ImageRequest(query: [("url", "http://example.com/a.jpg"), ("w", "2048")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())
        let (encoded, growth, reserved) = try await Self.measured(source, request, .fixed(format), transformer)
        #expect(encoded.format == format)
        #expect(try VipsImage.decode(encoded.bytes).width == 2048)
        #expect(growth <= reserved, "\(format): RSS grew \(growth) bytes, reserved \(reserved)")
        #expect(reserved >= EncoderWorkingSet.bytesPerPixel(format) * 2048 * 2048, "the encoder's share is reserved")
    }

    /// Issue #34: a JPEG libjpeg decodes into memory (at its shrink, or whole when it keeps its size) and
    /// the pool thread reduces to a forced size reserves that path's own working set, well under libvips'
    /// loader's, and stays inside it: baseline and progressive (libjpeg's coefficient buffer), 1/1 and 1/2.
    @Test(arguments: [
        (3840, 2160, false, 1920), (3840, 2160, false, 2048), (4096, 2731, false, 3840), (4096, 2731, false, 1920),
        (4096, 2731, true, 1920), (4096, 2731, true, 3840),
    ])
    func aJPEGDecodedInMemoryIsInsideItsReservation(width: Int, height: Int, progressive: Bool, output: Int) async throws {
        let source = try TestImages.jpeg(
            TestImages.noise(width: width, height: height, bands: 3), quality: 85, progressive: progressive, subsample: true)
        let request = try ImageRequest(query: [("url", "http://example.com/a.jpg"), ("w", String(output))], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
        let plan = try transformer.plan(source, request: request, choice: .fixed(.jpeg))
        #expect(plan.triesScaledFirst && plan.reservation < plan.fullReservation, "\(plan.reservation) of \(plan.fullReservation)")
        let (encoded, growth, reserved) = try await Self.measured(source, request, .fixed(.jpeg), transformer)
        #expect(try VipsImage.decode(encoded.bytes).width == output)
        #expect(reserved == plan.reservation, "libjpeg took it: nothing grew")
        #expect(growth <= reserved, "\(width)x\(height) to \(output): RSS grew \(growth) bytes, reserved \(reserved)")
    }

    /// Issue #34: a JPEG asked for at its own width (a srcset width capped at the source's) is decoded by
    /// libjpeg into memory and that decode is the variant. A large one reserves that path's working set
    /// (with the encoder's whole coefficient buffer, 4:2:0 below quality 90), smaller than the loader's;
    /// a smaller one keeps the loader's reservation, whose 8 MiB of slack is less than the path's 16. The
    /// process stays inside either.
    @Test(arguments: [(3840, 2160, 80, true), (2400, 1600, 75, false)])
    func aJPEGKeptAtItsSizeIsInsideItsReservation(width: Int, height: Int, quality: Int, smallerReservation: Bool) async throws {
        let source = try TestImages.jpeg(TestImages.noise(width: width, height: height, bands: 3), quality: 85, subsample: true)
        let request = try ImageRequest(
            query: [("url", "http://example.com/a.jpg"), ("w", String(width)), ("q", String(quality))], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
        let plan = try transformer.plan(source, request: request, choice: .fixed(.jpeg))
        let header = try SourceHeader(reading: source)
        #expect(ResizeBox(request: request, frames: 1).wholeDecodeIsTheVariant(for: header))
        #expect(plan.triesScaledFirst == smallerReservation && (plan.reservation < plan.fullReservation) == smallerReservation)
        #expect(!plan.leavesKeptSizeToLoader)
        // For another encoder (whose estimate was measured on the loader's path) libvips' loader reads it.
        let gif = try transformer.plan(source, request: request, choice: .fixed(.gif))
        #expect(gif.leavesKeptSizeToLoader && !gif.triesScaledFirst && gif.reservation == gif.fullReservation)
        let (encoded, growth, reserved) = try await Self.measured(source, request, .fixed(.jpeg), transformer)
        #expect(try VipsImage.decode(encoded.bytes).width == width)
        #expect(reserved == plan.reservation, "libjpeg took it: nothing grew")
        #expect(growth <= reserved, "\(width)x\(height) q\(quality): RSS grew \(growth) bytes, reserved \(reserved)")
    }

    /// Issue #34: a JPEG libjpeg's scaled decode declines (CMYK) is decoded by libvips' loader under the
    /// loader's full reservation, grown to before the loader runs.
    @Test func aJPEGLibjpegDeclinesGrowsToTheLoadersReservation() async throws {
        let cmyk = try TestImages.solid(red: 200, green: 90, blue: 40, width: 4096, height: 2731, profile: "cmyk")
        let source = try TestImages.jpeg(cmyk, quality: 85)
        let request = try ImageRequest(query: [("url", "http://example.com/a.jpg"), ("w", "1920")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
        let plan = try transformer.plan(source, request: request, choice: .fixed(.jpeg))
        #expect(plan.triesScaledFirst && plan.reservation < plan.fullReservation)
        let (encoded, growth, reserved) = try await Self.measured(source, request, .fixed(.jpeg), transformer)
        #expect(try VipsImage.decode(encoded.bytes).width == 1920)
        #expect(reserved == plan.fullReservation, "grown to the loader's reservation")
        #expect(growth <= reserved, "RSS grew \(growth) bytes, reserved \(reserved)")
    }

    /// Issue #33: libheif decodes a HEIC whole, into its own planes first; the estimate covers it.
    @Test func aHEICDecodeIsInsideItsReservation() async throws {
        let small = try TestImages.gradient(width: 256, height: 256)
        let large = try small.producingForTests { ipx_vips_thumbnail_image($0, $1, 3000, 3000, 3, -1, 0) }
            .producingForTests { ipx_vips_copy_memory($0, $1) }
        let source = try TestImages.heic(large, quality: 60)
        let request = try ImageRequest(query: [("url", "http://example.com/a.heic"), ("w", "300")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
        let (encoded, growth, reserved) = try await Self.measured(source, request, .fixed(.jpeg), transformer)
        #expect(try VipsImage.decode(encoded.bytes).width == 300)
        #expect(growth <= reserved, "RSS grew \(growth) bytes, reserved \(reserved)")
    }

    /// Issue #34: a still WebP is decoded once, scaled, into one memory image (three times the output's
    /// size, or all the way within 3x); the estimate follows the scale, the alpha and a cover's crop.
    @Test(arguments: [
        (3000, 3, "600"), (2400, 3, "1100"), (4096, 3, "1200"), (4096, 3, "3840"), (3000, 4, "1000"), (2400, 4, "500x500"),
        (3000, 3, "2000x800"),
    ])
    func aWebPDecodeIsInsideItsReservation(side: Int, bands: Int, box: String) async throws {
        let source = try TestImages.noise(width: side, height: side, bands: bands).encoded(as: .webp, quality: 90).bytes
        let parts = box.split(separator: "x").map(String.init)
        var query = [("url", "http://example.com/a.webp"), ("w", parts[0])]
        if parts.count > 1 { query += [("h", parts[1]), ("fit", "cover")] }
        let request = try ImageRequest(query: query, limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
        let (encoded, growth, reserved) = try await Self.measured(source, request, .fixed(.jpeg), transformer)
        #expect(try VipsImage.decode(encoded.bytes).width == Int(parts[0]))
        #expect(growth <= reserved, "\(side) px, \(bands) bands to \(box): RSS grew \(growth) bytes, reserved \(reserved)")
    }

    /// Issue #34: a PNG decoded whole to be kept, then a variant made from the kept decode: each stays
    /// within what it reserved (the kept decode counted once, by the cache, while it is kept); opaque
    /// ones reduced to 1200 and 2400 px are variants the reduce makes itself (6 bytes an output pixel
    /// reserved, 2026-11-26 (encode on the pool thread)).
    @Test(arguments: [(4, 640), (3, 3000), (4, 1200), (3, 1200), (3, 2400)])
    func aWholeDecodeAndAVariantFromItAreInsideTheirReservations(bands: Int, width: Int) async throws {
        let source = try TestImages.noise(width: 3000, height: 2000, bands: bands).encoded(as: .png).bytes
        let lender = PeakLender()
        let pool = TransformPool(workers: 1, memoryBytes: 1 << 30, lender: lender)
        pool.start()
        defer { Task { try? await pool.shutdown() } }
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())
        func measure(_ width: Int) async throws -> (growth: Int, width: Int) {
            let request = try ImageRequest(
                query: [("url", "http://example.com/a.png"), ("w", String(width))], limits: .init(maxDimension: 4096))
            _ = Vips.releaseFreeMemory()
            try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
            let before = try Self.statusKilobytes("VmRSS") * 1024
            let (encoded, _) = try await pool.transform(
                source, request: request, choice: .fixed(.jpeg), overlay: nil, with: transformer, sourceIdentity: "a|1")
            return (try Self.statusKilobytes("VmHWM") * 1024 - before, try VipsImage.decode(encoded.bytes).width)
        }
        let miss = try await measure(width)
        #expect(miss.width == width && pool.decodedSources.count == 1, "decoded whole and kept")
        #expect(miss.growth <= lender.peak, "\(bands) bands to \(width): RSS grew \(miss.growth), reserved \(lender.peak)")
        let kept = pool.memoryBudget.reservedBytes
        #expect(kept == 3000 * 2000 * bands, "the kept decode holds its own bytes in the budget")
        lender.resetPeak()
        let hit = try await measure(300)
        #expect(hit.width == 300)
        #expect(hit.growth <= lender.peak - kept, "from the kept decode: RSS grew \(hit.growth), reserved \(lender.peak - kept)")
        pool.decodedSources.removeAll()
        #expect(pool.memoryBudget.reservedBytes == 0)
    }
}

/// The reservations admitted and not released yet, as the tasks that waited for them report them.
private final class AdmittedBytes: Sendable {
    let list = Mutex<[Int]>([])
}
