import ImageCore
import NIOCore
import ProxyEngine
import Synchronization

/// Serialised status lines and fixed headers of recent memory-hit answers: everything but the request
/// id and `Server-Timing`, which differ per request. An entry holds for the second it was made in (its
/// `Date` and `Cache-Control: max-age` change with the second) and for its variant's expiry; at most
/// `capacity` entries, forgotten all at once when full.
final class PreparedHeadCache: Sendable {
    private struct Entry {
        var second: Int
        var expiresAt: Double
        var bytes: ByteBuffer
    }

    /// What a prepared head depends on besides the second: the status, `Connection: close`, the response
    /// options, and the variant's caching facts and ETag.
    struct Key: Hashable {
        var notModified: Bool
        var close: Bool
        var optionsKey: String
        var storable: Bool
        var revalidation: Revalidation
        var madeAt: Int
        var etag: String
    }

    private let entries = Mutex<[Key: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 1024) { self.capacity = capacity }

    /// The prepared head for `key` in `second` of a variant expiring at `expiresAt`; made by `make` when missing.
    func head(for key: Key, second: Int, expiresAt: Double, make: () -> ByteBuffer) -> ByteBuffer {
        if let entry = entries.withLock({ $0[key] }), entry.second == second, entry.expiresAt == expiresAt {
            return entry.bytes
        }
        let bytes = make()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(second: second, expiresAt: expiresAt, bytes: bytes)
        }
        return bytes
    }
}
