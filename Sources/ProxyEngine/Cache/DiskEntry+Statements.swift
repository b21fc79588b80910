import GRDB

/// The index row's two hot statements, prepared once per SQLite connection (GRDB's statement cache) and
/// read and bound column by column: GRDB's record upsert builds and prepares its SQL on every call, and
/// Codable decoding walks the fields through the runtime's metadata; both showed in the profile of a miss.
extension DiskEntry {
    /// Every column of the entries table, in the order ``save(_:)`` binds them.
    static let columnNames = [
        "key", "kind", "sourceKey", "size", "contentType", "etag", "originETag", "originLastModified", "fetchedAt",
        "expiresAt", "lastAccess", "revalidation", "storedInline", "overlaySourceKey",
    ]

    private static let saveSQL: String = {
        let columns = columnNames.joined(separator: ", ")
        let values = Array(repeating: "?", count: columnNames.count).joined(separator: ", ")
        let updates = columnNames.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO entries (\(columns)) VALUES (\(values)) ON CONFLICT(key) DO UPDATE SET \(updates)"
    }()

    private static let selectSQL = "SELECT \(columnNames.joined(separator: ", ")) FROM entries WHERE key = ?"

    /// Inserts the row, or updates every column of the row already stored under its key (the row is
    /// updated in place, so its blob in `bodies` is kept).
    func save(_ db: Database) throws {
        let arguments: StatementArguments = [
            key, kind.rawValue, sourceKey, size, contentType, etag, originETag, originLastModified, fetchedAt, expiresAt,
            lastAccess, revalidation.rawValue, storedInline, overlaySourceKey,
        ]
        try db.cachedStatement(sql: Self.saveSQL).execute(arguments: arguments)
    }

    /// The row stored under `key`, if any.
    static func row(_ db: Database, key: String) throws -> DiskEntry? {
        try DiskEntry.fetchOne(db.cachedStatement(sql: selectSQL), arguments: [key])
    }

    /// Reads a row column by column (instead of Codable's decoder); an unknown kind or revalidation
    /// (a row written by a later version) fails the read as a damaged row.
    public init(row: Row) throws {
        guard let kind = Kind(rawValue: row["kind"]), let revalidation = Revalidation(rawValue: row["revalidation"]) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "unknown kind or revalidation in the entries table")
        }
        self.init(
            key: row["key"], kind: kind, sourceKey: row["sourceKey"], size: row["size"], contentType: row["contentType"],
            etag: row["etag"], originETag: row["originETag"], originLastModified: row["originLastModified"],
            fetchedAt: row["fetchedAt"], expiresAt: row["expiresAt"], lastAccess: row["lastAccess"], revalidation: revalidation)
        storedInline = row["storedInline"]
        overlaySourceKey = row["overlaySourceKey"]
    }
}
