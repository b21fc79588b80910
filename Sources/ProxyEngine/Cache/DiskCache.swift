import Foundation
import GRDB
import ImageCore
import Logging
import NIOPosix
import Synchronization

/// The disk tier: entries up to ``Settings/inlineBytes`` (most thumbnails) as blobs in the SQLite index,
/// written with their row in one transaction; larger ones as one file each under
/// `objects/<2 hex>/<key>`, indexed in SQLite.
///
/// A file is written to `tmp/`, flushed, renamed into place, and only then indexed, so an indexed entry
/// always has its complete file or blob; ``recover()`` removes whatever a crash left half-done. Blocking work
/// (SQLite, file I/O) runs on a small thread pool of its own, never on an event loop. A failed write
/// (disk full, read-only) is logged and counted; the service keeps serving without caching.
public final class DiskCache: Sendable {
    let directory: String
    let index: DiskCacheIndex
    /// Byte budget enforced by the janitor (least recently used first).
    public let capacityBytes: Int
    /// Entries up to this size are stored as blobs in the index.
    let inlineBytes: Int
    let staleRetention: Double
    let logger: Logger
    private let io: NIOThreadPool
    private let pendingAccess = Locked<[String: Double]>([:])
    private let writeFailureCount = AtomicCounter()
    private let pendingWrites = AtomicCounter()
    private let pendingWriteByteCount = AtomicCounter()
    private let evictionCount = AtomicCounter()
    /// What start-up recovery found.
    public let recoveryReport: RecoveryReport

    var objectsDirectory: String { directory + "/objects" }
    var temporaryDirectory: String { directory + "/tmp" }

    /// What the disk tier is told, with the service's defaults.
    public struct Settings: Sendable, Equatable {
        /// Folder of entry files and the SQLite index, created if needed. Default `./cache`.
        public var directory = "./cache"
        /// Bytes of originals and variants kept; the janitor evicts least recently used entries past it.
        /// Default 2 GiB.
        public var capacityBytes = 2 * 1024 * 1024 * 1024
        /// Seconds an expired entry with validators (ETag, Last-Modified) is kept for revalidation.
        /// Default 604800 (7 days).
        public var staleRetentionSeconds = 604_800
        /// Entries of at most this many bytes are kept as blobs in the SQLite index instead of files of
        /// their own (no file, inode and rename per thumbnail; SQLite reads small blobs faster than
        /// files); 0 keeps every entry in a file. Key `cache.inlineBytes`, default 65536.
        public var inlineBytes = 65_536

        /// The defaults.
        public init() {}
    }

    /// Opens the cache as `settings` say and recovers it; a corrupt index is started afresh.
    public convenience init(settings: Settings, logger: Logger) throws {
        try self.init(
            directory: settings.directory, capacityBytes: settings.capacityBytes,
            staleRetention: settings.staleRetentionSeconds, inlineBytes: settings.inlineBytes, logger: logger)
    }

    /// Opens the cache in `directory` (created if needed) and recovers it; a corrupt index is started afresh.
    public init(directory: String, capacityBytes: Int, staleRetention: Int, inlineBytes: Int = 65_536, logger: Logger) throws {
        self.directory = directory
        self.capacityBytes = capacityBytes
        self.inlineBytes = inlineBytes
        self.staleRetention = Double(staleRetention)
        self.logger = logger
        for folder in [directory, directory + "/objects", directory + "/tmp"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let opened = try DiskCacheIndex.open(at: directory + "/index.sqlite")
        self.index = opened.index
        if opened.startedAfresh {
            logger.error("disk cache index was unreadable; started afresh", metadata: ["cache.dir": "\(directory)"])
        }
        let report = try Self.recover(index: index, objects: directory + "/objects", temporary: directory + "/tmp")
        self.recoveryReport = report
        self.io = NIOThreadPool(numberOfThreads: 2)
        io.start()
        if report.isChanged || opened.startedAfresh {
            logger.notice(
                "disk cache recovered",
                metadata: [
                    "temporary_removed": "\(report.temporaryFilesRemoved)", "rows_dropped": "\(report.rowsDropped)",
                    "files_removed": "\(report.filesRemoved)", "started_afresh": "\(opened.startedAfresh)",
                ])
        }
    }

    /// Waits for background writes, flushes batched access times, stops the I/O threads.
    public func shutdown() async {
        await waitForPendingWrites()
        await flushAccessTimes()
        try? await io.shutdownGracefully()
    }

    /// Stores in the background (the response does not wait); ``shutdown()`` waits for it.
    public func storeInBackground(_ bytes: [UInt8], as entry: DiskEntry) {
        pendingWrites.add(1)
        pendingWriteByteCount.add(bytes.count)
        Task {
            await store(bytes, as: entry)
            pendingWriteByteCount.subtract(bytes.count)
            pendingWrites.subtract(1)
        }
    }

    /// Bytes held in memory by background writes not yet on disk.
    public var pendingWriteBytes: Int { pendingWriteByteCount.value }

    /// Returns once no background write is in flight.
    public func waitForPendingWrites() async {
        while pendingWrites.value > 0 {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Entries evicted to keep the byte budget since start.
    public var evictions: Int { evictionCount.value }

    /// Writes that failed since start (disk full, read-only, ...).
    public var writeFailures: Int { writeFailureCount.value }

    func path(for key: String) -> String {
        "\(objectsDirectory)/\(key.prefix(2))/\(key)"
    }

    private func onIO<Result: Sendable>(_ work: @Sendable @escaping () throws -> Result) async throws -> Result {
        try await io.runIfActive(work)
    }

    /// The index row of `key`, without touching its file.
    public func entry(for key: String) async -> DiskEntry? {
        let index = self.index
        // One SELECT needs no snapshot of its own: read without a transaction (cheaper per hit).
        return try? await onIO { try index.pool.unsafeRead { db in try DiskEntry.row(db, key: key) } }
    }

    /// The bytes of an indexed entry; nil (and the row dropped) when its file or blob is missing or the
    /// wrong size.
    public func contents(of entry: DiskEntry) async -> [UInt8]? {
        let path = self.path(for: entry.key)
        let index = self.index
        let bytes: [UInt8]? = try? await onIO {
            if entry.storedInline {
                let blob = try index.pool.unsafeRead { db in
                    try Data.fetchOne(db.cachedStatement(sql: "SELECT body FROM bodies WHERE key = ?"), arguments: [entry.key])
                }
                guard let blob, blob.count == entry.size else {
                    _ = try? index.pool.write { db in try DiskEntry.deleteOne(db, key: entry.key) }
                    return nil
                }
                return [UInt8](blob)
            }
            guard let data = FileManager.default.contents(atPath: path), data.count == entry.size else {
                _ = try? index.pool.write { db in try DiskEntry.deleteOne(db, key: entry.key) }
                try? FileManager.default.removeItem(atPath: path)
                return nil
            }
            return [UInt8](data)
        }
        if bytes != nil { noteAccess(entry.key) }
        return bytes ?? nil
    }

    /// Stores `bytes` under `entry.key`: up to ``inlineBytes`` as a blob with its row in one transaction;
    /// larger ones as a temporary file, flushed, renamed, then indexed. Never throws.
    public func store(_ bytes: [UInt8], as given: DiskEntry) async {
        var placed = given
        placed.storedInline = bytes.count <= inlineBytes
        let entry = placed
        let finalPath = path(for: entry.key)
        let temporaryPath = "\(temporaryDirectory)/\(entry.key).\(UUID().uuidString)"
        let index = self.index
        do {
            try await onIO {
                if entry.storedInline {
                    try index.pool.write { db in
                        try entry.save(db)
                        try db.cachedStatement(sql: "INSERT OR REPLACE INTO bodies (key, body) VALUES (?, ?)")
                            .execute(arguments: [entry.key, Data(bytes)])
                    }
                    // A file from an earlier, larger entry of this key is no longer indexed.
                    if FileManager.default.fileExists(atPath: finalPath) { try? FileManager.default.removeItem(atPath: finalPath) }
                    return
                }
                try FileManager.default.createDirectory(
                    atPath: (finalPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Self.writeDurably(bytes, to: temporaryPath)
                guard rename(temporaryPath, finalPath) == 0 else { throw DiskCacheError.renameFailed }
                try index.pool.write { db in
                    try entry.save(db)
                    try db.cachedStatement(sql: "DELETE FROM bodies WHERE key = ?").execute(arguments: [entry.key])
                }
            }
        } catch {
            try? FileManager.default.removeItem(atPath: temporaryPath)
            writeFailureCount.add(1)
            logger.warning("disk cache write failed", metadata: ["error": "\(error)", "cache.dir": "\(directory)"])
        }
    }

    /// Sets a new expiry (after a revalidation answered 304).
    public func refresh(key: String, expiresAt: Double) async {
        let index = self.index
        _ = try? await onIO {
            try index.pool.write { db in
                try db.execute(sql: "UPDATE entries SET expiresAt = ?, fetchedAt = ? WHERE key = ?",
                               arguments: [expiresAt, Date().timeIntervalSince1970, key])
            }
        }
    }

    /// Records a use; written to the index in batches by ``flushAccessTimes()``.
    public func noteAccess(_ key: String) {
        let now = Date().timeIntervalSince1970
        pendingAccess.withLock { $0[key] = now }
    }

    /// Writes batched access times in one transaction.
    public func flushAccessTimes() async {
        let batch = pendingAccess.withLock { pending -> [String: Double] in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard !batch.isEmpty else { return }
        let index = self.index
        _ = try? await onIO {
            try index.pool.write { db in
                let statement = try db.makeStatement(sql: "UPDATE entries SET lastAccess = max(lastAccess, ?) WHERE key = ?")
                for (key, time) in batch { try statement.execute(arguments: [time, key]) }
            }
        }
    }

    /// Removes a source's original and all its variants; returns how many entries went.
    public func purge(sourceKey: String) async -> Int {
        let index = self.index
        let keys: [String] = (try? await onIO {
            try index.pool.write { db in
                let keys = try String.fetchAll(
                    db, sql: "SELECT key FROM entries WHERE sourceKey = ? OR overlaySourceKey = ?", arguments: [sourceKey, sourceKey])
                try db.execute(sql: "DELETE FROM entries WHERE sourceKey = ? OR overlaySourceKey = ?", arguments: [sourceKey, sourceKey])
                return keys
            }
        }) ?? []
        for key in keys { try? FileManager.default.removeItem(atPath: path(for: key)) }
        return keys.count
    }

    /// Removes every entry (index rows first, then their files); returns how many went.
    public func purgeAll() async -> Int {
        let index = self.index
        let keys: [String] = (try? await onIO {
            try index.pool.write { db in
                let keys = try String.fetchAll(db, sql: "SELECT key FROM entries")
                try db.execute(sql: "DELETE FROM entries")
                return keys
            }
        }) ?? []
        for key in keys { try? FileManager.default.removeItem(atPath: path(for: key)) }
        return keys.count
    }

    /// Bytes and entries indexed now.
    public func usage() async -> (bytes: Int, entries: Int) {
        let index = self.index
        let usage: (Int, Int)? = try? await onIO {
            try index.pool.read { db in
                guard let row = try Row.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0), COUNT(*) FROM entries") else {
                    return (0, 0)
                }
                return (row[0], row[1])
            }
        }
        return usage ?? (0, 0)
    }

    /// One janitor pass: flush access times, remove expired entries (those with validators only after
    /// `staleRetention`), then evict least recently used entries until the byte budget holds.
    @discardableResult
    public func runJanitor(now: Date = Date()) async -> (expired: Int, evicted: Int) {
        await flushAccessTimes()
        let index = self.index
        let capacity = capacityBytes
        let cutoff = now.timeIntervalSince1970
        let retentionCutoff = cutoff - staleRetention
        let doomed: (expired: [String], evicted: [String])? = try? await onIO {
            try index.pool.write { db in
                let expired = try String.fetchAll(
                    db,
                    sql: """
                        SELECT key FROM entries WHERE expiresAt < ? AND
                          ((originETag IS NULL AND originLastModified IS NULL) OR expiresAt < ?)
                        """, arguments: [cutoff, retentionCutoff])
                for key in expired { try DiskEntry.deleteOne(db, key: key) }
                var total = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM entries") ?? 0
                var evicted: [String] = []
                if total > capacity {
                    let rows = try Row.fetchCursor(db, sql: "SELECT key, size FROM entries ORDER BY lastAccess ASC")
                    while total > capacity, let row = try rows.next() {
                        let key: String = row[0]
                        evicted.append(key)
                        total -= row[1] as Int
                    }
                    for key in evicted { try DiskEntry.deleteOne(db, key: key) }
                }
                return (expired, evicted)
            }
        }
        guard let doomed else { return (0, 0) }
        evictionCount.add(doomed.evicted.count)
        for key in doomed.expired + doomed.evicted { try? FileManager.default.removeItem(atPath: path(for: key)) }
        return (doomed.expired.count, doomed.evicted.count)
    }

    /// Writes and flushes a whole file.
    static func writeDurably(_ bytes: [UInt8], to path: String) throws {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DiskCacheError.writeFailed(errno) }
        defer { close(descriptor) }
        var written = 0
        try bytes.withUnsafeBytes { raw in
            while written < raw.count {
                let result = write(descriptor, raw.baseAddress! + written, raw.count - written)
                guard result > 0 else { throw DiskCacheError.writeFailed(errno) }
                written += result
            }
        }
        guard fsync(descriptor) == 0 else { throw DiskCacheError.writeFailed(errno) }
    }
}

/// Why a disk cache write failed (logged, never shown to clients).
enum DiskCacheError: Error {
    case writeFailed(Int32)
    case renameFailed
}
