import ImageCore
import Synchronization

/// The faces found in each source, by the source's identity (its key and a digest of its bytes): a srcset
/// of one portrait with `g=face` searches it once. Bounded by entries (a search is a few boxes), the
/// oldest forgotten first.
public final class FaceSearchCache: Sendable {
    private let state = Mutex<(searches: [String: FaceSearch], order: [String])>(([:], []))
    /// Most sources remembered.
    public let capacity: Int

    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// The search kept for `identity`, if any.
    public func search(for identity: String) -> FaceSearch? {
        state.withLock { $0.searches[identity] }
    }

    /// Keeps `search` for `identity`, forgetting the oldest beyond ``capacity``.
    public func keep(_ search: FaceSearch, for identity: String) {
        state.withLock { state in
            if state.searches.updateValue(search, forKey: identity) == nil { state.order.append(identity) }
            if state.order.count > capacity {
                let excess = state.order.count - capacity
                for old in state.order.prefix(excess) { state.searches.removeValue(forKey: old) }
                state.order.removeFirst(excess)
            }
        }
    }

    /// Sources remembered now.
    public var count: Int { state.withLock { $0.searches.count } }
}
