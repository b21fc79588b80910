import Foundation
import GRDB
import ImageCore

/// The SQLite index of the disk cache (GRDB, WAL): opening, migrating, and the start-afresh fallback.
struct DiskCacheIndex {
    let pool: DatabasePool

    /// Opens (or creates) the index at `path`. A file that is not a usable database is moved aside
    /// and a new index started; `startedAfresh` says so.
    static func open(at path: String) throws -> (index: DiskCacheIndex, startedAfresh: Bool) {
        do {
            return (try openChecked(at: path), false)
        } catch {
            for suffix in ["", "-wal", "-shm"] {
                let file = path + suffix
                guard FileManager.default.fileExists(atPath: file) else { continue }
                let aside = file + ".corrupt-\(Int(Date().timeIntervalSince1970))"
                if (try? FileManager.default.moveItem(atPath: file, toPath: aside)) == nil {
                    try? FileManager.default.removeItem(atPath: file)
                }
            }
            return (try openChecked(at: path), true)
        }
    }

    private static func openChecked(at path: String) throws -> DiskCacheIndex {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let pool = try DatabasePool(path: path, configuration: configuration)
        let check = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") }
        guard check == "ok" else { throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "quick_check failed") }
        try migrator.migrate(pool)
        return DiskCacheIndex(pool: pool)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: DiskEntry.databaseTableName) { table in
                table.primaryKey("key", .text)
                table.column("kind", .text).notNull()
                table.column("sourceKey", .text).notNull().indexed()
                table.column("size", .integer).notNull()
                table.column("contentType", .text).notNull()
                table.column("etag", .text).notNull()
                table.column("originETag", .text)
                table.column("originLastModified", .text)
                table.column("fetchedAt", .double).notNull()
                table.column("expiresAt", .double).notNull()
                table.column("lastAccess", .double).notNull().indexed()
                table.column("variesOnAccept", .boolean).notNull()
            }
        }
        // Vary is decided by each request, not stored; the origin's revalidation demand is.
        migrator.registerMigration("v2") { db in
            try db.alter(table: DiskEntry.databaseTableName) { table in
                table.drop(column: "variesOnAccept")
                table.add(column: "revalidation", .text).notNull().defaults(to: Revalidation.none.rawValue)
            }
        }
        // Small entries (most thumbnails) as blobs beside their row: no file, no inode, one transaction.
        migrator.registerMigration("v3") { db in
            try db.alter(table: DiskEntry.databaseTableName) { table in
                table.add(column: "storedInline", .boolean).notNull().defaults(to: false)
            }
            try db.create(table: "bodies") { table in
                table.primaryKey("key", .text).references(DiskEntry.databaseTableName, onDelete: .cascade)
                table.column("body", .blob).notNull()
            }
        }
        // Variants indexed by the watermark image they drew, so that purging its URL reaches them.
        migrator.registerMigration("v4") { db in
            try db.alter(table: DiskEntry.databaseTableName) { table in
                table.add(column: "overlaySourceKey", .text)
            }
            try db.create(index: "entries_on_overlaySourceKey", on: DiskEntry.databaseTableName, columns: ["overlaySourceKey"])
        }
        return migrator
    }
}
