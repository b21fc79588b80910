import Synchronization

/// The memory tier: a least-recently-used map of variants, bounded in bytes.
///
/// O(1) lookup and insert under one short lock; nothing is awaited while it is held.
public final class MemoryCache: Sendable {
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

    public init(capacityBytes: Int) {
        self.capacityBytes = capacityBytes
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

    /// Stores a variant; entries larger than the whole budget are not kept.
    public func insert(_ value: CachedVariant, for key: VariantKey) {
        let size = value.body.readableBytes
        guard size <= capacityBytes else { return }
        state.withLock { state in
            if let existing = state.nodes.removeValue(forKey: key) {
                state.unlink(existing)
                state.bytes -= existing.value.body.readableBytes
            }
            let node = Node(key: key, value: value)
            state.nodes[key] = node
            state.pushFront(node)
            state.bytes += size
            while state.bytes > capacityBytes, let last = state.tail {
                state.unlink(last)
                state.nodes.removeValue(forKey: last.key)
                state.bytes -= last.value.body.readableBytes
            }
        }
    }

    /// Bytes and entries held now.
    public var usage: (bytes: Int, entries: Int) {
        state.withLock { ($0.bytes, $0.nodes.count) }
    }
}
