import Foundation
import GRDB
import ImageCore

extension DiskCache {
    /// What start-up recovery changed.
    public struct RecoveryReport: Sendable, Equatable {
        /// Leftover temporary files (a write cut short).
        public var temporaryFilesRemoved = 0
        /// Index rows whose file (or blob) was missing or of the wrong size.
        public var rowsDropped = 0
        /// Files that no row indexed (renamed but not yet indexed when the process died).
        public var filesRemoved = 0

        public init() {}

        public var isChanged: Bool { temporaryFilesRemoved + rowsDropped + filesRemoved > 0 }
    }

    /// Makes the folder and the index agree: temporary files removed, rows without (complete) files
    /// dropped, files without rows removed.
    static func recover(index: DiskCacheIndex, objects: String, temporary: String) throws -> RecoveryReport {
        var report = RecoveryReport()
        let files = FileManager.default
        for name in (try? files.contentsOfDirectory(atPath: temporary)) ?? [] {
            try? files.removeItem(atPath: temporary + "/" + name)
            report.temporaryFilesRemoved += 1
        }
        let rows = try index.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT entries.key, size, storedInline, length(bodies.body) FROM entries LEFT JOIN bodies USING (key)")
        }
        var indexed: Set<String> = []
        var dropped: [String] = []
        for row in rows {
            let key: String = row[0]
            let size: Int = row[1]
            if row[2] as Bool {
                // A blob is written with its row in one transaction; checked all the same.
                if (row[3] as Int?) != size { dropped.append(key) }
                continue
            }
            let path = "\(objects)/\(key.prefix(2))/\(key)"
            let actual = (try? files.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
            if actual == size { indexed.insert(key) } else { dropped.append(key) }
        }
        if !dropped.isEmpty {
            try index.pool.write { db in
                for key in dropped { try DiskEntry.deleteOne(db, key: key) }
            }
            report.rowsDropped = dropped.count
            for key in dropped { try? files.removeItem(atPath: "\(objects)/\(key.prefix(2))/\(key)") }
        }
        for shard in (try? files.contentsOfDirectory(atPath: objects)) ?? [] {
            let shardPath = objects + "/" + shard
            for name in (try? files.contentsOfDirectory(atPath: shardPath)) ?? [] where !indexed.contains(name) {
                try? files.removeItem(atPath: shardPath + "/" + name)
                report.filesRemoved += 1
            }
        }
        return report
    }
}
