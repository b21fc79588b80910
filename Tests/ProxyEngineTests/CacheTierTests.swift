import Foundation
import Logging
import NIOCore
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// The tiers on their own: byte budgets under churn, recovery, the freshness rules.
@Suite struct CacheTierTests {
    private func variant(_ size: Int, source: String = "s") -> CachedVariant {
        CachedVariant(
            body: ByteBuffer(repeating: 1, count: size), contentType: "image/jpeg", etag: "\"e\"", expiresAt: 0,
            storable: true, sourceKey: source)
    }

    @Test func memoryBudgetHoldsUnderChurnAndKeepsTheMostRecent() {
        let cache = MemoryCache(capacityBytes: 100_000)
        for index in 0..<300 {
            cache.insert(variant(1_000), for: VariantKey(hashing: "\(index)"))
            #expect(cache.usage.bytes <= 100_000)
        }
        #expect(cache.value(for: VariantKey(hashing: "299")) != nil)
        #expect(cache.value(for: VariantKey(hashing: "0")) == nil)
        #expect(cache.evictions >= 200)
        let entries = cache.usage.entries
        #expect(cache.purge(sourceKey: "other") == 0)
        #expect(cache.purge(sourceKey: "s") == entries)
        #expect(cache.usage.bytes == 0 && cache.usage.entries == 0)
    }

    @Test func memoryEntriesCountWhatTheyHoldNotTheirLength() {
        // A 40,000-byte body in storage NIO rounded up (to 65,536): the tier counts the storage.
        let body = ByteBuffer(bytes: [UInt8](repeating: 7, count: 40_000))
        #expect(body.capacity > body.readableBytes)
        let cache = MemoryCache(capacityBytes: 1_000_000)
        let value = CachedVariant(body: body, contentType: "image/jpeg", etag: "\"e\"", expiresAt: 0, storable: true, sourceKey: "s")
        cache.insert(value, for: VariantKey(hashing: "a"))
        #expect(cache.usage.bytes == body.capacity + MemoryCache.entryOverheadBytes)
        // So a budget of ten bodies' lengths holds fewer of them.
        let small = MemoryCache(capacityBytes: 10 * 40_000)
        for index in 0..<10 { small.insert(value, for: VariantKey(hashing: "\(index)")) }
        #expect(small.usage.entries < 10 && small.usage.bytes <= 10 * 40_000)
    }

    @Test func diskBudgetHoldsUnderChurnAndEvictsLeastRecentlyUsed() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-disk-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = try DiskCache(
            directory: folder, capacityBytes: 30_000, staleRetention: 0, logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
        let future = Date().timeIntervalSince1970 + 3600
        for index in 0..<90 {
            let key = VariantKey(hashing: "\(index)").hex
            let entry = DiskEntry(
                key: key, kind: .variant, sourceKey: "s", size: 1_000, contentType: "image/jpeg", etag: "\"\(index)\"",
                originETag: nil, originLastModified: nil, fetchedAt: 0, expiresAt: future, lastAccess: Double(index),
                revalidation: .none)
            await cache.store([UInt8](repeating: UInt8(index), count: 1_000), as: entry)
        }
        let result = await cache.runJanitor()
        #expect(result.evicted == 60)
        #expect(await cache.usage().bytes <= 30_000)
        let newest = try #require(await cache.entry(for: VariantKey(hashing: "89").hex))
        #expect(await cache.contents(of: newest) == [UInt8](repeating: 89, count: 1_000))
        #expect(await cache.entry(for: VariantKey(hashing: "0").hex) == nil)
        await cache.shutdown()
    }

    /// A purge of a watermark image's URL reaches the variants that drew it, in memory and on disk, and
    /// leaves the source's other variants (issue #63); the index keeps the key across a reopen.
    @Test func purgesReachVariantsByTheirWatermarkImage() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-overlay-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let logger = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
        let future = Date().timeIntervalSince1970 + 3600
        func entry(_ name: String, overlay: String?) -> DiskEntry {
            DiskEntry(
                key: VariantKey(hashing: name).hex, kind: .variant, sourceKey: "https://a/base.png", size: 10, contentType: "image/png",
                etag: "\"\(name)\"", originETag: nil, originLastModified: nil, fetchedAt: 0, expiresAt: future, lastAccess: 0,
                overlaySourceKey: overlay)
        }
        var cache = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, inlineBytes: 0, logger: logger)
        await cache.store([UInt8](repeating: 1, count: 10), as: entry("drawn", overlay: "https://a/logo.png"))
        await cache.store([UInt8](repeating: 2, count: 10), as: entry("plain", overlay: nil))
        await cache.shutdown()
        cache = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, inlineBytes: 0, logger: logger)
        #expect(await cache.entry(for: VariantKey(hashing: "drawn").hex)?.overlaySourceKey == "https://a/logo.png")
        #expect(await cache.purge(sourceKey: "https://a/logo.png") == 1)
        #expect(await cache.entry(for: VariantKey(hashing: "drawn").hex) == nil)
        #expect(await cache.entry(for: VariantKey(hashing: "plain").hex) != nil)
        await cache.shutdown()

        let memory = MemoryCache(capacityBytes: 1 << 20)
        var drawn = CachedVariant(body: ByteBuffer(bytes: [1]), contentType: "image/png", etag: "\"d\"", expiresAt: future, storable: true, sourceKey: "https://a/base.png")
        drawn.overlaySourceKey = "https://a/logo.png"
        memory.insert(drawn, for: VariantKey(hashing: "drawn"))
        memory.insert(
            CachedVariant(body: ByteBuffer(bytes: [2]), contentType: "image/png", etag: "\"p\"", expiresAt: future, storable: true, sourceKey: "https://a/base.png"),
            for: VariantKey(hashing: "plain"))
        #expect(memory.purge(sourceKey: "https://a/logo.png") == 1)
        #expect(memory.value(for: VariantKey(hashing: "plain")) != nil && memory.value(for: VariantKey(hashing: "drawn")) == nil)
    }

    /// Entries as files (`cache.inlineBytes: 0`); blobs are covered by `DiskCacheInlineTests`.
    @Test func recoveryRemovesPartialWorkAndACorruptIndexStartsAfresh() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-recover-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let logger = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })
        let cache = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, inlineBytes: 0, logger: logger)
        let keys = (0..<3).map { VariantKey(hashing: "k\($0)").hex }
        for key in keys {
            await cache.store([1, 2, 3, 4], as: DiskEntry(
                key: key, kind: .original, sourceKey: "s", size: 4, contentType: "image/png", etag: "\"x\"",
                originETag: nil, originLastModified: nil, fetchedAt: 0, expiresAt: 1e12, lastAccess: 0))
        }
        await cache.shutdown()
        // What a crash can leave: a temporary file, a truncated indexed file, a file without a row.
        FileManager.default.createFile(atPath: folder + "/tmp/partial", contents: Data([1]))
        FileManager.default.createFile(atPath: folder + "/objects/\(keys[0].prefix(2))/\(keys[0])", contents: Data([1, 2]))
        let orphan = VariantKey(hashing: "orphan").hex
        try FileManager.default.createDirectory(atPath: folder + "/objects/\(orphan.prefix(2))", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: folder + "/objects/\(orphan.prefix(2))/\(orphan)", contents: Data([9]))

        let recovered = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, inlineBytes: 0, logger: logger)
        #expect(recovered.recoveryReport.temporaryFilesRemoved == 1)
        #expect(recovered.recoveryReport.rowsDropped == 1)
        #expect(recovered.recoveryReport.filesRemoved == 1)
        #expect(await recovered.entry(for: keys[0]) == nil, "a truncated file is never served")
        #expect(await recovered.usage().entries == 2)
        await recovered.shutdown()

        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: folder + "/index.sqlite"))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: folder + "/index.sqlite" + suffix) }
        let afresh = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, inlineBytes: 0, logger: logger)
        #expect(await afresh.usage().entries == 0)
        #expect(afresh.recoveryReport.filesRemoved == 2, "files of the lost index are removed")
        await afresh.shutdown()
    }

    @Test func freshnessRules() {
        let policy = FreshnessPolicy(defaultTTL: 100, minTTL: 10, maxTTL: 1_000)
        #expect(policy.verdict(cacheControl: "max-age=50", expires: nil, date: nil) == .init(storable: true, lifetime: 50))
        #expect(policy.verdict(cacheControl: "max-age=50, s-maxage=70", expires: nil, date: nil).lifetime == 70)
        #expect(policy.verdict(cacheControl: "max-age=5", expires: nil, date: nil).lifetime == 10, "clamped up")
        #expect(policy.verdict(cacheControl: "max-age=99999", expires: nil, date: nil).lifetime == 1_000, "clamped down")
        #expect(policy.verdict(cacheControl: nil, expires: nil, date: nil).lifetime == 100)
        #expect(!policy.verdict(cacheControl: "no-store", expires: nil, date: nil).storable)
        #expect(!policy.verdict(cacheControl: "private, max-age=60", expires: nil, date: nil).storable)
        #expect(policy.verdict(cacheControl: "no-cache", expires: nil, date: nil) == .init(storable: true, lifetime: 0, revalidation: .always))
        #expect(policy.verdict(cacheControl: "max-age=5, must-revalidate", expires: nil, date: nil) == .init(storable: true, lifetime: 5, revalidation: .whenStale), "not clamped up")
        #expect(policy.verdict(cacheControl: "max-age=0, proxy-revalidate", expires: nil, date: nil).revalidation == .whenStale)
        #expect(
            policy.verdict(cacheControl: nil, expires: "Sun, 06 Nov 1994 08:50:37 GMT", date: "Sun, 06 Nov 1994 08:49:37 GMT").lifetime == 60)
        #expect(policy.verdict(cacheControl: nil, expires: "0", date: nil).lifetime == 10, "invalid Expires is already expired")
    }

    @Test func sourceKeysDropIgnoredParameters() throws {
        let keys = SourceKeyPolicy(ignoredParameters: ["X-Amz-*", "sig"])
        let a = try SourceURL(parsing: "https://b.example/p.jpg?id=1&X-Amz-Signature=a&sig=1")
        let b = try SourceURL(parsing: "https://b.example/p.jpg?id=1&x-amz-date=2&SIG=2")
        #expect(keys.key(for: a) == "https://b.example/p.jpg?id=1")
        #expect(keys.key(for: a) == keys.key(for: b))
        #expect(keys.key(for: try SourceURL(parsing: "https://b.example/p.jpg?sig=1")) == "https://b.example/p.jpg")
        #expect(keys.key(for: try SourceURL(parsing: "https://b.example/p.jpg?id=2")) == "https://b.example/p.jpg?id=2")
    }
}
