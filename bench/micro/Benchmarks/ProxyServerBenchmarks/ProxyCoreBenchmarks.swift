import Benchmark
import NIOCore
import ProxyServer

/// The per-request work that is not I/O: parsing, hashing, the memory LRU and the queue's bookkeeping.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))

    let query: [(name: String, value: String)] = [
        ("url", "https://images.example.com/photos/2026/11/kite.jpg?v=3"), ("w", "300"), ("h", "200"),
        ("fit", "cover"), ("g", "north"), ("format", "webp"), ("q", "75"), ("filter", "blur:2"),
    ]
    let limits = ImageRequest.Limits(maxDimension: 4096)

    Benchmark("Parse an /img query") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? ImageRequest(query: query, limits: limits))
        }
    }

    let request = try! ImageRequest(query: query, limits: limits)
    let sourceKeys = SourceKeyPolicy(ignoredParameters: ["X-Amz-*", "Expires"])
    Benchmark("Variant key (canonical form + SHA-256)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(request.variantKey(choice: .fixed(.webp), sourceKey: sourceKeys.key(for: request.source)))
        }
    }

    let cache = MemoryCache(capacityBytes: 64 * 1024 * 1024)
    let keys = (0..<10_000).map { VariantKey(hashing: "variant-\($0)") }
    let variant = CachedVariant(
        body: ByteBuffer(bytes: [UInt8](repeating: 7, count: 8 * 1024)), contentType: "image/jpeg", etag: "\"e\"",
        expiresAt: 4_000_000_000, storable: true, variesOnAccept: false, sourceKey: "s")
    for key in keys { cache.insert(variant, for: key) }
    Benchmark("Memory LRU hit (10k entries)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            index = (index &+ 7919) % keys.count
            blackHole(cache.value(for: keys[index]))
        }
    }

    let small = MemoryCache(capacityBytes: 1024 * 1024)
    Benchmark("Memory LRU insert with eviction (1 MiB budget)") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            index = (index &+ 1) % keys.count
            small.insert(variant, for: keys[index])
        }
    }

    let jobKeys = (0..<64).map { "https://origin.example.com/image-\($0).jpg" }
    Benchmark("Priority queue: 64 jobs joined twice, run through 4 slots") { benchmark in
        for _ in benchmark.scaledIterations {
            var state = WorkQueueState(slots: 4, maxQueued: 256)
            var running: [(key: String, job: WorkQueueState.JobID)] = []
            for (index, key) in jobKeys.enumerated() {
                if case .start(let job, _) = state.join(key: key, priority: index % 3 == 0 ? .high : .low) { running.append((key, job)) }
                _ = state.join(key: key, priority: .high)
            }
            while let next = running.popLast() {
                blackHole(state.finish(key: next.key, job: next.job))
                while let started = state.nextToStart() { running.append(started) }
            }
        }
    }
}
