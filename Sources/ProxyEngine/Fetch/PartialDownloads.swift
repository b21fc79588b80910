import Foundation
import ImageCore
import Synchronization

/// The received beginnings of downloads that were aborted because nobody waited for them any more,
/// kept in memory (bounded by bytes, oldest dropped first) so that the next request for the same URL
/// can resume with `Range` + `If-Range` instead of starting over.
///
/// Only downloads the origin marked resumable are kept: `Accept-Ranges: bytes` and a validator
/// usable in `If-Range` (a strong `ETag`, else `Last-Modified`).
final class PartialDownloads: Sendable {
    /// The beginning of one download.
    struct Partial: Sendable, Equatable {
        var bytes: [UInt8]
        /// The `If-Range` value: the strong ETag or the Last-Modified date of the interrupted response.
        var validator: String
    }

    fileprivate struct Storage {
        var partials: [String: Partial] = [:]
        /// URLs oldest first.
        var order: [String] = []
        var bytes = 0
    }

    private let storage = Mutex(Storage())
    /// Bytes kept at most over all partial downloads; 0 turns resuming off.
    let budget: Int

    init(budget: Int) { self.budget = budget }

    /// Keeps the beginning of `url`'s body when the interrupted response allows resuming it.
    func keep(_ bytes: [UInt8], of url: String, headers: [String: String]) {
        guard let validator = Self.validator(in: headers) else { return }
        restore(Partial(bytes: bytes, validator: validator), of: url)
    }

    /// Puts back a beginning taken for a resume attempt that was interrupted before it received anything.
    func restore(_ partial: Partial, of url: String) {
        let bytes = partial.bytes
        guard !bytes.isEmpty, bytes.count <= budget else { return }
        storage.withLock { storage in
            storage.remove(url)
            while storage.bytes + bytes.count > budget, let oldest = storage.order.first { storage.remove(oldest) }
            storage.partials[url] = partial
            storage.order.append(url)
            storage.bytes += bytes.count
        }
    }

    /// Takes the kept beginning of `url`, if any (a resumed download that fails starts over next time).
    func take(_ url: String) -> Partial? {
        storage.withLock { storage in
            let partial = storage.partials[url]
            storage.remove(url)
            return partial
        }
    }

    /// The `If-Range` validator of a response that may be resumed, nil when it may not.
    static func validator(in headers: [String: String]) -> String? {
        guard headers["accept-ranges"]?.lowercased().contains("bytes") == true else { return nil }
        if let etag = headers["etag"], etag.hasPrefix("\"") { return etag }
        return headers["last-modified"]
    }
}

extension PartialDownloads.Partial {
    /// The body when `contentRange` (of a 206 answer) continues exactly where these bytes end.
    func joined(with rest: [UInt8], contentRange: String?) -> [UInt8]? {
        guard let range = ContentRange(parsing: contentRange), range.first == bytes.count,
            range.last == bytes.count + rest.count - 1, range.total.map({ $0 == range.last + 1 }) ?? true
        else { return nil }
        return bytes + rest
    }
}

private extension PartialDownloads.Storage {
    mutating func remove(_ url: String) {
        guard let partial = partials.removeValue(forKey: url) else { return }
        order.removeAll { $0 == url }
        bytes -= partial.bytes.count
    }
}

/// `Content-Range: bytes first-last/total` (total may be `*`).
struct ContentRange: Equatable {
    var first: Int
    var last: Int
    var total: Int?

    init?(parsing value: String?) {
        guard let value, value.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int(bounds[0].trimmingCharacters(in: .whitespaces)),
            let last = Int(bounds[1].trimmingCharacters(in: .whitespaces)), first <= last
        else { return nil }
        self.first = first
        self.last = last
        let total = parts[1].trimmingCharacters(in: .whitespaces)
        if total == "*" { self.total = nil } else if let count = Int(total) { self.total = count } else { return nil }
    }
}
