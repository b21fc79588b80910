import Foundation
import GRDB
import Logging
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// Entries up to `cache.inlineBytes` are blobs in the SQLite index (issue #34: no file and inode per
/// thumbnail); larger ones stay files. Both come back byte for byte, after a restart too, and a blob
/// that went missing is never served.
@Suite struct DiskCacheInlineTests {
    private let logger = Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() })

    private func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ipx-inline-\(UUID().uuidString)").path
    }

    private func entry(_ key: String, size: Int, source: String = "s") -> DiskEntry {
        DiskEntry(
            key: key, kind: .variant, sourceKey: source, size: size, contentType: "image/jpeg", etag: "\"\(key)\"",
            originETag: nil, originLastModified: nil, fetchedAt: 0, expiresAt: Date().timeIntervalSince1970 + 3600,
            lastAccess: 0)
    }

    /// Files under `objects/` (every shard).
    private func objectFiles(_ folder: String) -> [String] {
        let objects = folder + "/objects"
        return ((try? FileManager.default.contentsOfDirectory(atPath: objects)) ?? []).flatMap { shard in
            (try? FileManager.default.contentsOfDirectory(atPath: objects + "/" + shard)) ?? []
        }
    }

    @Test func smallEntriesAreBlobsAndLargeOnesFiles() async throws {
        let folder = folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let small = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let large = (0..<9000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let smallKey = VariantKey(hashing: "small").hex, largeKey = VariantKey(hashing: "large").hex
        let cache = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, inlineBytes: 8192, logger: logger)
        await cache.store(small, as: entry(smallKey, size: small.count))
        await cache.store(large, as: entry(largeKey, size: large.count))
        #expect(objectFiles(folder) == [largeKey], "only the entry above inlineBytes has a file")
        let smallEntry = try #require(await cache.entry(for: smallKey))
        let largeEntry = try #require(await cache.entry(for: largeKey))
        #expect(smallEntry.storedInline && !largeEntry.storedInline)
        #expect(await cache.contents(of: smallEntry) == small)
        #expect(await cache.usage() == (bytes: small.count + large.count, entries: 2))
        await cache.shutdown()

        // After a restart both are still there, whole.
        let reopened = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, inlineBytes: 8192, logger: logger)
        #expect(!reopened.recoveryReport.isChanged)
        #expect(await reopened.contents(of: try #require(await reopened.entry(for: smallKey))) == small)
        #expect(await reopened.contents(of: try #require(await reopened.entry(for: largeKey))) == large)
        // An entry that shrinks below the limit leaves its file behind it, and one that grows leaves its blob.
        await reopened.store(Array(large.prefix(100)), as: entry(largeKey, size: 100))
        await reopened.store(large, as: entry(smallKey, size: large.count))
        #expect(objectFiles(folder) == [smallKey])
        let blobs = try await reopened.index.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM bodies") }
        #expect(blobs == 1)
        #expect(await reopened.contents(of: try #require(await reopened.entry(for: largeKey))) == Array(large.prefix(100)))
        await reopened.shutdown()
    }

    @Test func aMissingOrShortBlobIsNeverServedAndRecoveryDropsItsRow() async throws {
        let folder = folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let keys = (0..<3).map { VariantKey(hashing: "b\($0)").hex }
        let cache = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, logger: logger)
        for key in keys { await cache.store([1, 2, 3, 4, 5], as: entry(key, size: 5)) }
        // A blob cut short, as a damaged index might hold it: not served, its row goes.
        try await cache.index.pool.write { db in
            try db.execute(sql: "UPDATE bodies SET body = ? WHERE key = ?", arguments: [Data([1, 2]), keys[0]])
        }
        #expect(await cache.contents(of: try #require(await cache.entry(for: keys[0]))) == nil)
        #expect(await cache.entry(for: keys[0]) == nil)
        // One more, found at start-up.
        try await cache.index.pool.write { db in
            try db.execute(sql: "UPDATE bodies SET body = ? WHERE key = ?", arguments: [Data([9]), keys[1]])
        }
        await cache.shutdown()
        let recovered = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, logger: logger)
        #expect(recovered.recoveryReport.rowsDropped == 1)
        #expect(await recovered.entry(for: keys[1]) == nil)
        #expect(await recovered.contents(of: try #require(await recovered.entry(for: keys[2]))) == [1, 2, 3, 4, 5])
        await recovered.shutdown()
    }

    @Test func evictionAndPurgesTakeTheBlobsWithTheirRows() async throws {
        let folder = folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = try DiskCache(directory: folder, capacityBytes: 5_000, staleRetention: 0, logger: logger)
        for index in 0..<10 {
            var row = entry(VariantKey(hashing: "e\(index)").hex, size: 1_000, source: index < 8 ? "a" : "b")
            row.lastAccess = Double(index)
            await cache.store([UInt8](repeating: UInt8(index), count: 1_000), as: row)
        }
        func blobs() async throws -> Int {
            try await cache.index.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM bodies") ?? -1 }
        }
        #expect(try await blobs() == 10)
        #expect(await cache.runJanitor().evicted == 5)
        #expect(try await blobs() == 5, "the evicted rows' blobs went with them")
        #expect(await cache.purge(sourceKey: "a") == 3)
        #expect(try await blobs() == 2)
        #expect(await cache.purgeAll() == 2)
        #expect(try await blobs() == 0)
        await cache.shutdown()
    }

    /// The index row's prepared statements (`DiskEntry+Statements.swift`) bind and read every column of
    /// the table as the migrations left it, and a second save of a key updates its row in place (its blob
    /// stays).
    @Test func theRowStatementsCoverEveryColumnAndKeepTheBlob() async throws {
        let folder = folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = try DiskCache(directory: folder, capacityBytes: 1 << 30, staleRetention: 0, inlineBytes: 8192, logger: logger)
        let columns = try await cache.index.pool.read { db in try db.columns(in: "entries").map(\.name) }
        #expect(Set(columns) == Set(DiskEntry.columnNames) && columns.count == DiskEntry.columnNames.count)
        var stored = entry(VariantKey(hashing: "row").hex, size: 3)
        stored.kind = .original
        stored.originETag = "\"o\""
        stored.originLastModified = "Wed, 21 Oct 2015 07:28:00 GMT"
        stored.revalidation = .whenStale
        await cache.store([1, 2, 3], as: stored)
        var read = try #require(await cache.entry(for: stored.key))
        stored.storedInline = true
        #expect(read == stored)
        var update = read
        update.expiresAt += 60
        update.lastAccess = 7
        let changed = update
        try await cache.index.pool.write { db in try changed.save(db) }
        read = try #require(await cache.entry(for: stored.key))
        #expect(read == changed)
        #expect(await cache.contents(of: read) == [1, 2, 3], "updated in place: the blob is kept")
    }
}
