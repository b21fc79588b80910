import Foundation
import ImageCore
import Tracing

extension ImagePipeline {
    /// A source's bytes and how long they stay fresh.
    struct Original: Sendable {
        var bytes: [UInt8]
        var expiresAt: Double
        var storable: Bool
        /// The origin answered 304 to a conditional request: the stored bytes are current.
        var revalidated: Bool
        /// The index row describing it (for storing, and for its variants' validators).
        var entry: DiskEntry
        /// Held while these downloaded bytes are in memory (see `originalsInHand`).
        var permit: PermitPool.Permit? = nil
        /// The traced request whose job fetched it and the span of that fetch (the origin's request, or the
        /// shared tier's read): requests that joined the job link to it.
        var fetchedBy: RequestTrace? = nil
        var fetchSpan: ServiceContext? = nil
    }

    /// The original from the disk cache when fresh; else through the download queue (one job per
    /// source, `priority` for this waiter): revalidated when stale with validators, or downloaded.
    /// Origin failures are remembered briefly (``NegativeCache``).
    ///
    /// - Parameter staleVariantValidators: the origin validators of the caller's stale variant. Used only
    ///   when no original is stored: the request is then conditional, and a 304 comes back as a
    ///   `revalidated` original without bytes. Such a job has its own queue key (the validators), so
    ///   requests without a stale variant never join it.
    func original(
        of source: SourceURL, sourceKey: String, conditions: ClientConditions, now: Double, timings: RequestTimings,
        priority: WorkQueueState.Priority, staleVariantValidators: OriginValidators? = nil
    ) async throws -> Original {
        let key = VariantKey(hashing: "original|" + sourceKey).hex
        let stored = await disk.entry(for: key)
        if let stored, stored.expiresAt > now || (conditions.onlyIfCached && stored.revalidation == .none),
            let bytes = await disk.contents(of: stored)
        {
            return Original(bytes: bytes, expiresAt: stored.expiresAt, storable: true, revalidated: false, entry: stored)
        }
        if conditions.onlyIfCached { throw CacheMissError() }
        if let (error, remaining) = negative.recall(sourceKey, now: now) {
            if case .notFound = error { throw CacheableError(error, maxAge: remaining) }
            throw error
        }
        let variantValidators = stored == nil ? staleVariantValidators : nil
        let jobKey = variantValidators.map { sourceKey + "|if:" + ($0.etag ?? "") + "|" + ($0.lastModified ?? "") } ?? sourceKey
        let trace = timings.trace
        do {
            return try await timings.measure("fetch") { fetchSpan in
                let original = try await downloads.run(key: jobKey, priority: priority) {
                    // The permit travels with the bytes and is given back when the last copy goes away.
                    let permit = try await self.originalsInHand.acquire()
                    var original: Original
                    if variantValidators == nil, let shared = await self.sharedOriginal(sourceKey: sourceKey, key: key, now: now) {
                        original = shared
                    } else {
                        let tracing = trace.flatMap { trace in fetchSpan.map { (trace, $0.context) } }
                        original = try await self.download(
                            source, sourceKey: sourceKey, key: key, stored: stored, variantValidators: variantValidators, tracing: tracing)
                    }
                    original.permit = permit
                    return original
                }
                if let fetchSpan, original.fetchedBy !== trace, let fetched = original.fetchSpan {
                    // A duplicate that joined another request's download: a link to that download.
                    fetchSpan.attributes["imageproxy.joined"] = true
                    fetchSpan.addLink(SpanLink(context: fetched, attributes: [:]))
                }
                return original
            }
        } catch is QueueFullError {
            throw PipelineError.overloaded
        }
    }

    /// The download job of one source: a conditional request when a stale copy with validators is
    /// stored (or, without one, a stale variant's validators are given), else a plain one; the result is
    /// stored on disk once for every waiter.
    private func download(
        _ source: SourceURL, sourceKey: String, key: String, stored: DiskEntry?, variantValidators: OriginValidators?,
        tracing: (trace: RequestTrace, parent: ServiceContext)? = nil
    ) async throws -> Original {
        let now = Date().timeIntervalSince1970
        let validators = stored?.originValidators ?? variantValidators
        let fetched: FetchedSource
        var fetchSpan: ServiceContext?
        do {
            if let (trace, parent) = tracing {
                fetched = try await trace.span("GET", kind: .client, parent: parent) { span in
                    fetchSpan = span.context
                    trace.describeOriginRequest(span, source: source, conditional: validators != nil)
                    let fetched = try await fetcher.fetch(source, validators: validators, headers: trace.headerLines(for: span.context))
                    trace.describeOriginAnswer(span, fetched)
                    return fetched
                }
            } else {
                fetched = try await fetcher.fetch(source, validators: validators)
            }
        } catch let error as FetchError {
            negative.remember(error, for: sourceKey, now: now)
            if case .notFound = error, let remaining = negative.recall(sourceKey, now: now)?.remaining {
                throw CacheableError(error, maxAge: remaining)
            }
            throw error
        }
        let verdict = freshness.verdict(
            cacheControl: fetched.header("cache-control"), expires: fetched.header("expires"), date: fetched.header("date"))
        let expiresAt = now + Double(verdict.lifetime)

        if fetched.status == 304, var entry = stored {
            if let bytes = await disk.contents(of: entry) {
                await disk.refresh(key: key, expiresAt: expiresAt)
                entry.expiresAt = expiresAt
                return Original(bytes: bytes, expiresAt: expiresAt, storable: verdict.storable, revalidated: true, entry: entry)
            }
            // The file vanished between the lookup and now: download it whole.
            let whole = try await fetcher.fetch(source)
            return downloaded(whole, key: key, sourceKey: sourceKey, now: now)
        }
        var original: Original
        if fetched.status == 304, variantValidators != nil {
            // The stale variants are current; there are no bytes to transform or store.
            original = describe(fetched, key: key, sourceKey: sourceKey, now: now)
            original.revalidated = true
        } else {
            original = downloaded(fetched, key: key, sourceKey: sourceKey, now: now)
        }
        original.fetchedBy = tracing?.trace
        original.fetchSpan = fetchSpan
        return original
    }

    /// A fresh download, stored on disk and in the shared tier (in the background) unless the origin
    /// forbade storing.
    private func downloaded(_ fetched: FetchedSource, key: String, sourceKey: String, now: Double) -> Original {
        let original = describe(fetched, key: key, sourceKey: sourceKey, now: now)
        if original.storable, originalAdmission.admits(sourceKey) { disk.storeInBackground(original.bytes, as: original.entry) }
        if original.storable { sharedTier?.storeOriginalInBackground(original.bytes, entry: original.entry) }
        return original
    }

    /// The original from the shared tier (`cache.shared.storeOriginals`), kept on disk too: no download.
    func sharedOriginal(sourceKey: String, key: String, now: Double) async -> Original? {
        guard let sharedTier, let (bytes, entry) = await sharedTier.original(sourceKey: sourceKey, key: key, now: now) else {
            return nil
        }
        if originalAdmission.admits(sourceKey) { disk.storeInBackground(bytes, as: entry) }
        return Original(bytes: bytes, expiresAt: entry.expiresAt, storable: true, revalidated: false, entry: entry)
    }

    private func describe(_ fetched: FetchedSource, key: String, sourceKey: String, now: Double) -> Original {
        let verdict = freshness.verdict(
            cacheControl: fetched.header("cache-control"), expires: fetched.header("expires"), date: fetched.header("date"))
        let expiresAt = now + Double(verdict.lifetime)
        let entry = DiskEntry(
            key: key, kind: .original, sourceKey: sourceKey, size: fetched.body.count,
            contentType: fetched.header("content-type") ?? "application/octet-stream",
            etag: "\"\(fetched.body.count)-\(Int(now * 1000))\"", originETag: fetched.header("etag"),
            originLastModified: fetched.header("last-modified"), fetchedAt: now, expiresAt: expiresAt,
            lastAccess: now, revalidation: verdict.revalidation)
        return Original(bytes: fetched.body, expiresAt: expiresAt, storable: verdict.storable, revalidated: false, entry: entry)
    }
}
