import ImageCore
import Synchronization

/// The memory tier: a least-recently-used map of variants, bounded in bytes.
///
/// O(1) lookup and insert under one short lock; nothing is awaited while it is held. When an insert
/// passes the budget, least recently used entries go until the low watermark (90%) holds.
///
/// Entries are counted by what they really hold (``allocatedBytes(of:)``): the body's storage, which
/// NIO rounds up to a power of two (a 40 KB thumbnail holds 64 KB), plus the entry's bookkeeping. So
/// the budget bounds the memory the tier costs the process, not the sum of the bodies' lengths.
///
/// The tier lends its budget to running transforms (``TransformMemoryLender``): while transforms hold
/// reserved memory, the tier holds that much less, up to all of its budget, evicting least recently used
/// entries to make room (they stay on disk: a later request is a disk hit). Cache and
/// transforms together then stay near the budget instead of adding up: a large PNG decoding beside a full
/// tier is what made the process's peak.
public final class MemoryCache: TransformMemoryLender {
    private final class Node {
        let key: VariantKey
        var value: CachedVariant
        var previous: Node?
        var next: Node?
        init(key: VariantKey, value: CachedVariant) {
            self.key = key
            self.value = value
        }
    }

    private struct State {
        var nodes: [VariantKey: Node] = [:]
        /// Most recently used.
        var head: Node?
        /// Least recently used.
        var tail: Node?
        var bytes = 0
        /// Bytes lent to running transforms.
        var lent = 0

        mutating func unlink(_ node: Node) {
            node.previous?.next = node.next
            node.next?.previous = node.previous
            if head === node { head = node.next }
            if tail === node { tail = node.previous }
            node.previous = nil
            node.next = nil
        }

        mutating func pushFront(_ node: Node) {
            node.next = head
            head?.previous = node
            head = node
            if tail == nil { tail = node }
        }
    }

    private let state = Mutex(State())
    /// Byte budget; inserting past it evicts least recently used entries.
    public let capacityBytes: Int
    private let evictionCount = Atomic<Int>(0)

    /// What the memory tier is told, with the service's defaults.
    public struct Settings: Sendable, Equatable {
        /// Bytes the entries may hold (each counted by its allocation plus bookkeeping). Default 256 MiB.
        public var capacityBytes = 256 * 1024 * 1024

        /// The defaults.
        public init() {}
    }

    /// An empty tier with the budget `settings` give.
    public convenience init(settings: Settings) {
        self.init(capacityBytes: settings.capacityBytes)
    }

    /// An empty tier of `capacityBytes`.
    public init(capacityBytes: Int) {
        self.capacityBytes = capacityBytes
    }

    /// Entries evicted since start.
    public var evictions: Int { evictionCount.load(ordering: .relaxed) }

    /// Most of the budget lent to transforms at once: all of it (the default transforms' budget,
    /// `image.maxTransformBytes`, is the default tier's), so the tier and the transforms together never
    /// hold more than the tier's budget. Until 2026-11-27 (the transforms' budget is the tier's) a quarter stayed with the hottest variants and
    /// the transforms had three quarters; kept decodes (one decode for a srcset) need the room more, and
    /// a variant evicted by a loan is a disk hit, not a miss.
    public var maxLentBytes: Int { capacityBytes }

    /// Bytes lent to running transforms now.
    public var lentBytes: Int { state.withLock { $0.lent } }

    /// What the entries may hold now: the budget less what is lent (at most ``maxLentBytes``).
    private func limit(_ state: borrowing State) -> Int {
        capacityBytes - min(state.lent, maxLentBytes)
    }

    /// Evicting this much or more for a loan hands the freed pages back to the kernel at once.
    static let trimAfterEvictingBytes = 8 << 20

    /// Lends `bytes` to a transform: entries are evicted down to the smaller budget, and when that frees
    /// ``trimAfterEvictingBytes`` or more, malloc's free pages are handed back to the kernel right away
    /// (``MallocTrim``, at most every 250 ms). Most entries are small blocks inside malloc's heaps: freed, they stay
    /// resident until a trim, so without it the transform's buffers came on top of the evicted entries'
    /// pages and the process peaked a transform's size above the tier (the hostile soak: 536 MB).
    public func lend(_ bytes: Int) {
        let evicted = state.withLock { state in
            state.lent += bytes
            return evictBeyond(limit(state), keeping: nil, in: &state)
        }
        // Outside the lock, once the evicted entries are released (a response still sending one keeps it).
        if evicted >= Self.trimAfterEvictingBytes { MallocTrim.soon() }
    }

    /// A transform gave its loan back. After a large one (``trimAfterEvictingBytes`` or more) malloc's
    /// free pages go back to the kernel at once: the transform's own small and mid-sized blocks (libvips'
    /// regions, the encoders' buffers below the mmap threshold) are free now but would stay resident, and
    /// the next large transform would come on top of them.
    public func takeBack(_ bytes: Int) {
        state.withLock { $0.lent -= bytes }
        if bytes >= Self.trimAfterEvictingBytes { MallocTrim.soon() }
    }

    /// Evicts least recently used entries (never `keeping`) until at most `bytes` are held.
    /// Returns the bytes evicted.
    @discardableResult
    private func evictBeyond(_ bytes: Int, keeping: Node?, in state: inout State) -> Int {
        var evicted = 0
        var evictedBytes = 0
        while state.bytes > bytes, let last = state.tail, last !== keeping {
            state.unlink(last)
            state.nodes.removeValue(forKey: last.key)
            let size = Self.allocatedBytes(of: last.value)
            state.bytes -= size
            evictedBytes += size
            evicted += 1
        }
        if evicted > 0 { evictionCount.add(evicted, ordering: .relaxed) }
        return evictedBytes
    }

    /// The variant under `key`, marked as recently used.
    public func value(for key: VariantKey) -> CachedVariant? {
        state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            state.unlink(node)
            state.pushFront(node)
            return node.value
        }
    }

    /// The bookkeeping of one entry besides its body: the node, its slot in the map, the variant's
    /// header strings (an estimate; they are short).
    public static let entryOverheadBytes = 512

    /// The memory an entry holds: its body's storage capacity and ``entryOverheadBytes``.
    public static func allocatedBytes(of value: CachedVariant) -> Int {
        value.body.capacity + entryOverheadBytes
    }

    /// Stores a variant; entries larger than the whole budget are not kept.
    public func insert(_ value: CachedVariant, for key: VariantKey) {
        let size = Self.allocatedBytes(of: value)
        guard size <= capacityBytes else { return }
        state.withLock { state in
            if let existing = state.nodes.removeValue(forKey: key) {
                state.unlink(existing)
                state.bytes -= Self.allocatedBytes(of: existing.value)
            }
            let node = Node(key: key, value: value)
            state.nodes[key] = node
            state.pushFront(node)
            state.bytes += size
            let limit = limit(state)
            guard state.bytes > limit else { return }
            // Down to the low watermark: 90% of what may be held now.
            evictBeyond(limit / 10 * 9, keeping: node, in: &state)
        }
    }

    /// Removes every variant of a source; returns how many went.
    @discardableResult
    public func purge(sourceKey: String) -> Int {
        state.withLock { state in
            let doomed = state.nodes.values.filter { $0.value.sourceKey == sourceKey || $0.value.overlaySourceKey == sourceKey }
            for node in doomed {
                state.unlink(node)
                state.nodes.removeValue(forKey: node.key)
                state.bytes -= Self.allocatedBytes(of: node.value)
            }
            return doomed.count
        }
    }

    /// Removes every variant; returns how many went.
    @discardableResult
    public func purgeAll() -> Int {
        state.withLock { state in
            let count = state.nodes.count
            for node in state.nodes.values { node.previous = nil; node.next = nil }
            state.nodes.removeAll()
            state.head = nil
            state.tail = nil
            state.bytes = 0
            return count
        }
    }

    /// Bytes and entries held now.
    public var usage: (bytes: Int, entries: Int) {
        state.withLock { ($0.bytes, $0.nodes.count) }
    }
}
