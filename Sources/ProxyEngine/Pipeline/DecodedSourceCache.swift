import ImageCore
import Synchronization

/// Sources decoded into memory, kept a short time so that the other widths of a srcset are resized from one
/// decode (#34): the first variant of a PNG or GIF source (or a wide one of a WebP) decodes it whole into
/// memory, and a wide variant of a large JPEG decodes it at its DCT scale (``ImageCore/DecodedSource/shrink``),
/// and hands the decode here; the next variants of the same bytes, while it is kept, resize from it.
///
/// Keyed by the source's identity (its cache key and a hash of its bytes, ``identity(sourceKey:bytes:)``,
/// so a changed source never meets an old decode). Bounded three ways: by ``Settings/capacity``; by the transform
/// memory budget, in which every kept decode holds its bytes, taken only when they fit without holding
/// any transform back and given back on demand (``TransformMemoryReclaimer``) before a transform waits;
/// and by ``Settings/lifetime`` without use. A decode in use by a transform is never given back until
/// the transform is over.
///
/// Which decode goes first when room is needed: the one that saves least per byte for the time it has
/// not been used (GreedyDual-Size: each decode's credit is its decode time per byte plus the credit of
/// the last one given back, renewed on every use). A 4 MB JPEG whose Huffman decoding takes 200 ms
/// outlives a 12 MB one that decodes in 20 ms, and an old decode nobody uses still goes in time.
public final class DecodedSourceCache: TransformMemoryReclaimer {
    /// How much is kept and for how long; the defaults are the service's (`image.decodedSource*`).
    public struct Settings: Sendable, Equatable {
        /// Most bytes of decodes kept (`image.decodedSourceBytes`); 0 keeps none. Default 128 MiB, inside
        /// the transform memory budget (256 MiB), which running transforms take first.
        public var capacity = 134_217_728
        /// How long a decode nobody uses is kept (`image.decodedSourceSeconds`). Default 20 s.
        public var lifetime: Duration = .seconds(20)

        /// The defaults.
        public init() {}
    }

    /// A kept decode lent to one transform; ``end()`` gives it back.
    public final class Lease: Sendable {
        /// The decode.
        public let source: DecodedSource
        fileprivate let slot: Slot
        private weak let cache: DecodedSourceCache?
        private let ended = Mutex(false)

        fileprivate init(source: DecodedSource, slot: Slot, cache: DecodedSourceCache) {
            self.source = source
            self.slot = slot
            self.cache = cache
        }

        /// A variant is being made from the decode: counted as a hit (a lease whose transform cannot use
        /// it, e.g. one with a crop, is not).
        public func markUsed() {
            cache?.observe?(.hit)
        }

        /// The transform is over (only the first call counts).
        public func end() {
            guard !ended.withLock({ ended in defer { ended = true }; return ended }) else { return }
            cache?.endUse(of: slot)
        }
    }

    /// One kept decode; its fields change only under the cache's lock.
    fileprivate final class Slot: @unchecked Sendable {
        let source: DecodedSource
        /// The source key part of its identity.
        let sourceKey: String
        var users = 0
        var lastUse: ContinuousClock.Instant
        /// Its place in the order of giving back: the lowest goes first.
        var credit: Double
        /// No longer findable (evicted or expired); its bytes go back when its last user is done.
        var removed = false

        init(source: DecodedSource, key: String, now: ContinuousClock.Instant, inflation: Double) {
            self.source = source
            sourceKey = DecodedSourceCache.sourceKey(ofIdentity: key)
            lastUse = now
            credit = inflation + Self.worth(of: source)
        }

        /// What a use of the decode saves per byte kept: its decode time in nanoseconds per byte.
        static func worth(of source: DecodedSource) -> Double {
            let (seconds, attoseconds) = source.decodeCost.components
            return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(max(1, source.bytes))
        }
    }

    private struct State {
        var slots: [String: Slot] = [:]
        /// How many findable decodes each source key has (``holdsDecode(ofSourceKey:)``).
        var decodesBySourceKey: [String: Int] = [:]
        /// Bytes held in the budget: kept decodes and removed ones still in use.
        var held = 0
        var sweeping = false
        /// The credit of the last decode given back for room (GreedyDual-Size's inflation).
        var inflation = 0.0
    }

    /// The settings.
    public let settings: Settings
    private let budget: TransformMemoryBudget
    private let state = Mutex(State())
    /// Counts hits, keeps and drops (nil: not counted).
    fileprivate let observe: (@Sendable (Event) -> Void)?

    /// What happened to a lookup or an offered decode.
    public enum Event: String, Sendable, CaseIterable {
        /// A variant was made from a kept decode.
        case hit
        /// A decode was kept.
        case kept
        /// A decode was offered but not kept (no room in the cache or the budget).
        case dropped
    }

    /// A cache holding its decodes in `budget`, which asks it for memory back before a transform waits.
    public init(settings: Settings, budget: TransformMemoryBudget, observe: (@Sendable (Event) -> Void)? = nil) {
        self.settings = settings
        self.budget = budget
        self.observe = observe
        budget.setReclaimer(self)
    }

    /// The key a decode of `bytes` is kept under: the source's key, the length and a 64-bit hash of the
    /// bytes, so that a source fetched again with other bytes never meets an old decode and one fetched
    /// again with the same bytes finds it. Nil for sources no decode is kept of
    /// (``ImageCore/ImageTransformer/keepsDecodes(of:)``), which are not hashed.
    public static func identity(sourceKey: String, bytes: [UInt8]) -> String? {
        guard ImageTransformer.keepsDecodes(of: bytes) else { return nil }
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        return "\(sourceKey)|\(bytes.count)|\(hasher.finalize())"
    }

    /// The source key an identity (``identity(sourceKey:bytes:)``) was made of.
    static func sourceKey(ofIdentity identity: String) -> String {
        guard let hash = identity.lastIndex(of: "|"), let length = identity[..<hash].lastIndex(of: "|") else { return identity }
        return String(identity[..<length])
    }

    /// Whether a decode of a source with this key (any bytes) is kept now: its waiting variants go first
    /// (ImagePipeline's transform queue), while the decode is there to use.
    public func holdsDecode(ofSourceKey sourceKey: String) -> Bool {
        isEnabled && state.withLock { $0.decodesBySourceKey[sourceKey] != nil }
    }

    /// Whether decodes are kept at all.
    public var isEnabled: Bool { settings.capacity > 0 }

    /// Bytes held now (kept decodes and removed ones still in use).
    public var heldBytes: Int { state.withLock { $0.held } }

    /// Decodes findable now.
    public var count: Int { state.withLock { $0.slots.count } }

    /// The decode kept for `key`, lent until the lease's ``Lease/end()``; nil when none is kept.
    public func lease(_ key: String) -> Lease? {
        guard isEnabled else { return nil }
        let now = ContinuousClock.now
        let (lease, expired) = state.withLock { state -> (Lease?, Int) in
            let expired = sweep(&state, now: now)
            guard let slot = state.slots[key] else { return (nil, expired) }
            slot.users += 1
            slot.lastUse = now
            slot.credit = state.inflation + Slot.worth(of: slot.source)
            return (Lease(source: slot.source, slot: slot, cache: self), expired)
        }
        budget.giveBack(expired)
        return lease
    }

    /// Keeps `source` under `key` when it fits in the cache (unused decodes make room, lowest credit
    /// first) and in the budget now; otherwise drops it. A decode kept already under `key` stays.
    ///
    /// `endingJobOf`: the bytes of the job that made the decode, released in the same step as the decode
    /// is kept (``TransformMemoryBudget/release(_:keeping:committing:)``), so a job that waited behind it
    /// finds the decode; released whatever happens.
    public func keep(_ source: DecodedSource, for key: String, endingJobOf jobBytes: Int? = nil) {
        guard isEnabled, source.bytes <= settings.capacity else {
            if let jobBytes { budget.release(jobBytes) }
            if isEnabled { observe?(.dropped) }
            return
        }
        let now = ContinuousClock.now
        let freed = state.withLock { state -> Int in
            var freed = sweep(&state, now: now)
            if state.slots[key] == nil {
                freed += evict(&state, until: { $0.held + source.bytes <= settings.capacity })
            }
            return freed
        }
        budget.giveBack(freed)
        // Reserved and placed in one step (under the budget's lock), so a job that starts waiting for
        // memory meanwhile always finds the decode to take back.
        var startSweeper = false
        func place() -> Bool {
            state.withLock { state -> Bool in
                guard state.slots[key] == nil, state.held + source.bytes <= settings.capacity else { return false }
                let slot = Slot(source: source, key: key, now: now, inflation: state.inflation)
                state.slots[key] = slot
                state.decodesBySourceKey[slot.sourceKey, default: 0] += 1
                state.held += source.bytes
                startSweeper = !state.sweeping
                state.sweeping = true
                return true
            }
        }
        let kept = jobBytes.map { budget.release($0, keeping: source.bytes, committing: place) }
            ?? budget.tryReserve(source.bytes, committing: place)
        guard kept else {
            observe?(.dropped)
            return
        }
        observe?(.kept)
        if startSweeper { sweepUntilEmpty() }
    }

    /// Gives back unused decodes, lowest credit first, until `bytes` are freed or none is left
    /// unused.
    public func reclaim(_ bytes: Int) {
        let freed = state.withLock { state in evict(&state, until: { _ in false }, limit: bytes) }
        budget.giveBack(freed)
    }

    /// Drops every unused decode (tests, shutdown).
    public func removeAll() {
        let freed = state.withLock { state in evict(&state, until: { _ in false }) }
        budget.giveBack(freed)
    }

    fileprivate func endUse(of slot: Slot) {
        let freed = state.withLock { state -> Int in
            slot.users -= 1
            slot.lastUse = ContinuousClock.now
            guard slot.removed, slot.users == 0 else { return 0 }
            state.held -= slot.source.bytes
            return slot.source.bytes
        }
        budget.giveBack(freed)
        // Unused now: jobs that started waiting while it was in use could not have it then.
        budget.reclaimForWaiters()
    }

    /// Removes unused decodes past their lifetime; returns the bytes to give back to the budget.
    private func sweep(_ state: inout State, now: ContinuousClock.Instant) -> Int {
        var freed = 0
        for (key, slot) in state.slots where slot.users == 0 && now - slot.lastUse > settings.lifetime {
            freed += remove(key, slot, &state)
        }
        return freed
    }

    /// Removes unused decodes, lowest credit first (the least recently used among equals), until `done`
    /// holds (or `limit` bytes are freed); returns the bytes to give back to the budget.
    private func evict(_ state: inout State, until done: (State) -> Bool, limit: Int = .max) -> Int {
        var freed = 0
        while !done(state), freed < limit {
            let unused = state.slots.filter { $0.value.users == 0 }
            guard let (key, slot) = unused.min(by: { ($0.value.credit, $0.value.lastUse) < ($1.value.credit, $1.value.lastUse) })
            else { break }
            state.inflation = max(state.inflation, slot.credit)
            freed += remove(key, slot, &state)
        }
        return freed
    }

    /// Makes a decode unfindable; its bytes are given back now when nobody uses it (returned), else by
    /// its last user.
    private func remove(_ key: String, _ slot: Slot, _ state: inout State) -> Int {
        state.slots.removeValue(forKey: key)
        let left = (state.decodesBySourceKey[slot.sourceKey] ?? 1) - 1
        state.decodesBySourceKey[slot.sourceKey] = left > 0 ? left : nil
        slot.removed = true
        guard slot.users == 0 else { return 0 }
        state.held -= slot.source.bytes
        return slot.source.bytes
    }

    /// Sweeps every half lifetime while anything is kept, so that an idle service gives the memory back.
    private func sweepUntilEmpty() {
        let interval = settings.lifetime / 2
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                let (freed, empty) = self.state.withLock { state -> (Int, Bool) in
                    let freed = self.sweep(&state, now: .now)
                    let empty = state.slots.isEmpty
                    if empty { state.sweeping = false }
                    return (freed, empty)
                }
                self.budget.giveBack(freed)
                if empty { return }
            }
        }
    }
}
