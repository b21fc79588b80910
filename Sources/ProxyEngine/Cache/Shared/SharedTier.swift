import Foundation
import ImageCore
import NIOCore
import Synchronization
import Tracing

/// The shared result tier: variants kept in an S3-compatible bucket that every replica of a fleet reads
/// and writes, below memory and disk. A variant made anywhere is made once for the fleet; a new or
/// restarted replica answers from it without a download or a transform.
///
/// Faults cost nothing but the tier's benefit: every read has a short deadline (`timeoutMilliseconds`),
/// a failed, slow, truncated or damaged read (length and SHA-256 are checked against the object's own
/// metadata) is a miss, and after repeated failures a ``CircuitBreaker`` skips the tier for a while.
/// Writes go out in the background through a bounded queue; when it is full they are dropped and counted.
///
/// Layout (``SharedTierLayout``): one folder per source, so a purge finds its variants with one listing;
/// purges are also written to a purge log that every replica reads (``pollPurges(apply:)``), so a purge
/// through any replica reaches the memory and disk tiers of all of them.
public final class SharedTier: Sendable {
    /// `cache.shared.*`; the defaults are the service's (`config/imageproxy.yaml`).
    public struct Settings: Sendable, Equatable {
        /// The endpoint and credentials (`cache.shared.endpoint`, `region`, `pathStyle`, `accessKeyId`,
        /// `secretAccessKey`; the AWS environment variables when empty).
        public var endpoint = S3Endpoint()
        /// The bucket; empty turns the tier off (the default).
        public var bucket = ""
        /// Prepended to every key (several services may share a bucket). Default `imageproxy/`.
        public var prefix = "imageproxy/"
        /// Milliseconds a read may take before it counts as a miss. Default 200.
        public var timeoutMilliseconds = 200
        /// Milliseconds a background write or a purge call may take. Default 5000.
        public var writeTimeoutMilliseconds = 5_000
        /// Bytes of variants waiting to be written at most; more are dropped (and counted). Default 32 MiB.
        public var maxPendingWriteBytes = 32 << 20
        /// Milliseconds between reads of the purge log. Default 2000 (a purge reaches every replica
        /// within about that, well inside 10 s).
        public var purgePollMilliseconds = 2_000
        /// Whether downloaded originals are kept in the bucket too (`<prefix>v1/<source>/original`), so a
        /// replica that has a source's original nowhere else transforms a new variant without downloading
        /// it again. Default false (sources are often larger than all their variants together).
        public var storeOriginals = false
        /// Failures in a row that open the breaker, and seconds it stays open. Defaults 5 and 10.
        public var breakerThreshold = 5
        public var breakerOpenSeconds = 10

        public init() {}

        /// Whether the tier is on: a bucket is named.
        public var isEnabled: Bool { !bucket.isEmpty }
    }

    public let settings: Settings
    let client: ObjectStoreClient
    private let metrics: ProxyMetrics?
    private let breaker: Mutex<CircuitBreaker>
    private let pendingWriteBytes = Mutex(0)
    /// The last purge-log key applied.
    private let lastPurgeSeen: Mutex<String>
    /// When each source was last purged (from the purge log or here), for an hour: a variant made from a
    /// source fetched before its purge is stale whenever it reaches the bucket (a write that was in
    /// flight during the purge lands after the deletes), and is neither written nor served. Key
    /// ``SharedTierLayout/everything`` for a purge of everything.
    private let purgedAt = Mutex<[String: Double]>([:])
    /// Reads and writes by result since start, for the status page.
    private let counts = Mutex<[String: Int]>([:])
    /// This replica's name in purge-log keys.
    let replicaID = String(UUID().uuidString.prefix(8)).lowercased()

    /// Transfers of the tier run on a libcurl multi handle (and thread) of their own: a slow or dead
    /// tier never holds up origin downloads.
    private let driver: CurlMultiDriver

    /// A tier for `settings`; call ``shutdown()`` at the end.
    public init(settings: Settings, metrics: ProxyMetrics?, now: Double = Date().timeIntervalSince1970) {
        self.settings = settings
        self.driver = CurlMultiDriver()
        self.client = ObjectStoreClient(endpoint: settings.endpoint, bucket: settings.bucket, driver: driver)
        self.metrics = metrics
        self.breaker = Mutex(CircuitBreaker(threshold: settings.breakerThreshold, openSeconds: Double(settings.breakerOpenSeconds)))
        // Purges of the last hour are applied at start: a replica that was down may hold what they removed.
        self.lastPurgeSeen = Mutex(SharedTierLayout(prefix: settings.prefix).purgeKey(at: now - 3_600, replica: ""))
    }

    private var layout: SharedTierLayout { SharedTierLayout(prefix: settings.prefix) }

    /// Stops the tier's transfer thread (aborting what still runs).
    public func shutdown() async { await driver.shutdown() }

    /// The purge-log body that stands for every source.
    public static let everything = SharedTierLayout.everything

    /// Reads by result (`hit`, `miss`, `error`, `skipped`) and writes (`write_ok`, `write_error`,
    /// `write_dropped`) since start.
    public var resultCounts: [String: Int] { counts.withLock { $0 } }

    /// Whether the breaker is skipping the tier now.
    public var isSkipped: Bool { breaker.withLock { $0.isOpen } }

    private func count(read result: String) {
        metrics?.sharedReads[result]?.increment()
        counts.withLock { $0[result, default: 0] += 1 }
    }

    private func count(write result: String) {
        metrics?.sharedWrites[result]?.increment()
        counts.withLock { $0["write_" + result, default: 0] += 1 }
    }

    /// The time of the last purge of `sourceKey` (or of everything) known here; 0 when none.
    private func lastPurge(of sourceKey: String) -> Double {
        purgedAt.withLock { max($0[sourceKey] ?? 0, $0[SharedTierLayout.everything] ?? 0) }
    }

    /// Remembers a purge for an hour (older ones are forgotten as new ones arrive).
    private func notePurge(of sourceKey: String, at time: Double) {
        purgedAt.withLock { purges in
            purges[sourceKey] = max(purges[sourceKey] ?? 0, time)
            if purges.count > 1_000 { purges = purges.filter { $0.value > time - 3_600 } }
        }
    }

    /// Whether calls go out now (the breaker is closed, or lets a trial through).
    private func mayCall() -> Bool {
        let allowed = breaker.withLock { $0.allows(at: Date().timeIntervalSince1970) }
        metrics?.sharedBreakerOpen.set(Int64(allowed ? 0 : 1))
        return allowed
    }

    private func record(success: Bool) {
        let open = breaker.withLock { breaker in
            if success { breaker.recordSuccess() } else { breaker.recordFailure(at: Date().timeIntervalSince1970) }
            return breaker.isOpen
        }
        metrics?.sharedBreakerOpen.set(Int64(open ? 1 : 0))
    }

    /// The variant under `key` when the bucket holds it whole and fresh at `now`; nil for a miss, an
    /// expired or damaged object, a slow or failed read, or while the breaker is open.
    /// - Parameter traceHeaders: the request's trace context (`traceparent`) as header lines, when traced.
    public func variant(for key: VariantKey, sourceKey: String, now: Double, traceHeaders: [String] = []) async -> CachedVariant? {
        guard mayCall() else {
            count(read: "skipped")
            return nil
        }
        let started = ContinuousClock.now
        let answer = await client.get(
            layout.variantKey(sourceKey: sourceKey, variant: key.hex), timeoutMilliseconds: settings.timeoutMilliseconds,
            maxBytes: 64 << 20, headers: traceHeaders)
        metrics?.sharedReadDuration.record(ContinuousClock.now - started)
        switch answer {
        case .failure:
            record(success: false)
            count(read: "error")
            return nil
        case .success(let answer) where answer.status == 404:
            record(success: true)
            count(read: "miss")
            return nil
        case .success(let answer) where answer.status == 200:
            record(success: true)
            guard let metadata = SharedVariantMetadata(headers: answer.headers), metadata.describes(answer.body),
                metadata.sourceKey == sourceKey
            else {
                count(read: "error")  // truncated, damaged, or another source's
                return nil
            }
            guard metadata.sourceFetchedAt > lastPurge(of: sourceKey) else {
                count(read: "miss")  // made from a source fetched before a purge of it
                return nil
            }
            guard metadata.expiresAt > now else {
                count(read: "miss")  // expired entries are not served
                return nil
            }
            count(read: "hit")
            return metadata.variant(body: answer.body)
        case .success:
            record(success: false)
            count(read: "error")
            return nil
        }
    }

    /// The original of `sourceKey` when the bucket holds it whole and fresh at `now` (only with
    /// ``Settings/storeOriginals``): its bytes and its index row under `key`.
    public func original(sourceKey: String, key: String, now: Double) async -> (bytes: [UInt8], entry: DiskEntry)? {
        guard settings.storeOriginals, mayCall() else { return nil }
        let answer = await client.get(
            layout.originalKey(sourceKey: sourceKey), timeoutMilliseconds: settings.timeoutMilliseconds, maxBytes: 256 << 20)
        guard case .success(let answer) = answer else {
            record(success: false)
            return nil
        }
        record(success: answer.status == 200 || answer.status == 404)
        guard answer.status == 200, let metadata = SharedVariantMetadata(headers: answer.headers), metadata.describes(answer.body),
            metadata.sourceKey == sourceKey, metadata.sourceFetchedAt > lastPurge(of: sourceKey), metadata.expiresAt > now
        else { return nil }
        return (answer.body, metadata.originalEntry(key: key, now: now))
    }

    /// Writes a downloaded original in the background (only with ``Settings/storeOriginals``), through
    /// the same bounded queue as variants.
    public func storeOriginalInBackground(_ bytes: [UInt8], entry: DiskEntry) {
        guard settings.storeOriginals, entry.fetchedAt > lastPurge(of: entry.sourceKey) else { return }
        write(
            bytes, as: layout.originalKey(sourceKey: entry.sourceKey), contentType: entry.contentType,
            metadata: SharedVariantMetadata(original: entry, bytes: bytes))
    }

    /// Writes a new variant, made from a source fetched at `sourceFetchedAt`, in the background; left out
    /// when its source was purged since it was fetched. With `trace`, the write is span `imageproxy.shared_write`
    /// of that request (ending after the request when the write does) and its `PUT` carries the span's context.
    public func storeInBackground(
        _ variant: CachedVariant, bytes: [UInt8], key: VariantKey, sourceFetchedAt: Double, trace: RequestTrace? = nil
    ) {
        guard variant.storable, sourceFetchedAt > lastPurge(of: variant.sourceKey) else { return }
        write(
            bytes, as: layout.variantKey(sourceKey: variant.sourceKey, variant: key.hex), contentType: variant.contentType,
            metadata: SharedVariantMetadata(variant: variant, bytes: bytes, sourceFetchedAt: sourceFetchedAt), trace: trace)
    }

    /// Puts `bytes` under `objectKey` in the background; dropped (and counted) while the breaker is open or
    /// when the write queue (``Settings/maxPendingWriteBytes``) is full.
    private func write(
        _ bytes: [UInt8], as objectKey: String, contentType: String, metadata: SharedVariantMetadata, trace: RequestTrace? = nil
    ) {
        let admitted = mayCall() && pendingWriteBytes.withLock { pending in
            guard pending + bytes.count <= settings.maxPendingWriteBytes else { return false }
            pending += bytes.count
            return true
        }
        guard admitted else {
            count(write: "dropped")
            return
        }
        Task.detached { [self] in
            defer { pendingWriteBytes.withLock { $0 -= bytes.count } }
            let put = { (traceHeaders: [String]) in
                await self.client.put(
                    objectKey, body: bytes, contentType: contentType, metadata: metadata.headers,
                    timeoutMilliseconds: self.settings.writeTimeoutMilliseconds, headers: traceHeaders)
            }
            let answer: Result<ObjectStoreClient.Answer, ObjectStoreClient.Failure>
            if let trace {
                answer = await trace.span("imageproxy.shared_write") { span in
                    span.attributes["imageproxy.output.bytes"] = bytes.count
                    let answer = await put(trace.headerLines(for: span.context))
                    if let status = try? answer.get().status { span.attributes["http.response.status_code"] = status }
                    return answer
                }
            } else {
                answer = await put([])
            }
            let ok = (try? answer.get().status).map { (200...299).contains($0) } ?? false
            record(success: ok)
            count(write: ok ? "ok" : "error")
        }
    }

    /// Removes every variant of `sourceKey` from the bucket and writes the purge to the purge log (so
    /// every replica drops it from memory and disk). Returns the objects removed.
    @discardableResult
    public func purge(sourceKey: String) async -> Int {
        notePurge(of: sourceKey, at: Date().timeIntervalSince1970)
        let removed = await deleteAll(under: layout.sourceFolder(sourceKey: sourceKey))
        await appendPurge(sourceKey)
        return removed
    }

    /// Removes every variant in the bucket (under the prefix) and logs a purge of everything.
    @discardableResult
    public func purgeAll() async -> Int {
        notePurge(of: SharedTierLayout.everything, at: Date().timeIntervalSince1970)
        let removed = await deleteAll(under: layout.variantsFolder)
        await appendPurge(SharedTierLayout.everything)
        return removed
    }

    private func deleteAll(under folder: String) async -> Int {
        let listed = await client.list(prefix: folder, timeoutMilliseconds: settings.writeTimeoutMilliseconds)
        guard case .success(let keys) = listed
        else { return 0 }
        var removed = 0
        for key in keys {
            if case .success(let answer) = await client.delete(key, timeoutMilliseconds: settings.writeTimeoutMilliseconds),
                (200...299).contains(answer.status)
            {
                removed += 1
            }
        }
        return removed
    }

    private func appendPurge(_ sourceKey: String) async {
        let key = layout.purgeKey(at: Date().timeIntervalSince1970, replica: replicaID)
        _ = await client.put(
            key, body: Array(sourceKey.utf8), contentType: "text/plain", metadata: [:],
            timeoutMilliseconds: settings.writeTimeoutMilliseconds)
    }

    /// Reads the purge log once: every purge written since the last read (by any replica) is handed to
    /// `apply` with its source key (``SharedTierLayout/everything`` for all). Returns how many.
    ///
    /// The listed keys and their bodies are untrusted (anyone who may write to the bucket can put an
    /// object under the prefix): a key that is not a purge-log key, one the store cannot answer for
    /// (a 4xx), and a body that is not a source key (``SharedTierLayout/sourceKey(ofPurgeBody:)``) are
    /// skipped and counted (`imageproxy_shared_tier_purge_keys_skipped_total`), never a stop; only a
    /// failure of the store itself (no answer, a 5xx) ends the read, which starts there next time.
    @discardableResult
    public func pollPurges(apply: (String) async -> Void) async -> Int {
        let after = lastPurgeSeen.withLock { $0 }
        let listed = await client.list(
            prefix: layout.purgeFolder, startAfter: after, timeoutMilliseconds: settings.writeTimeoutMilliseconds)
        guard case .success(let keys) = listed
        else { return 0 }
        var applied = 0
        for key in keys {
            guard let time = layout.time(ofPurgeKey: key) else {
                skipPurgeKey(key)
                continue
            }
            let answer = await client.get(key, timeoutMilliseconds: settings.writeTimeoutMilliseconds, maxBytes: 16_384)
            guard case .success(let answer) = answer, !(500...599).contains(answer.status) else { break }  // again next time
            guard answer.status == 200, let sourceKey = SharedTierLayout.sourceKey(ofPurgeBody: answer.body) else {
                skipPurgeKey(key)
                continue
            }
            notePurge(of: sourceKey, at: time)
            await apply(sourceKey)
            lastPurgeSeen.withLock { $0 = key }
            metrics?.sharedPurgesApplied.increment()
            applied += 1
        }
        return applied
    }

    /// Steps over a purge-log key that cannot be read or believed, counting it.
    private func skipPurgeKey(_ key: String) {
        lastPurgeSeen.withLock { $0 = key }  // keys arrive in the listing's order
        metrics?.sharedPurgeKeysSkipped.increment()
    }

}
