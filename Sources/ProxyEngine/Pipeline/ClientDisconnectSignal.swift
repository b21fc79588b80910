import Synchronization

/// Fires once, when a connection's client is gone; runs the callbacks registered until then.
public final class ClientDisconnectSignal: Sendable {
    private struct State {
        var fired = false
        var callbacks: [Int: @Sendable () -> Void] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Runs `callback` when the client goes away (at once if it already has). Returns a registration
    /// to pass to ``remove(_:)`` when no longer interested.
    public func onDisconnect(_ callback: @escaping @Sendable () -> Void) -> Int? {
        let id = state.withLock { state -> Int? in
            guard !state.fired else { return nil }
            defer { state.nextID += 1 }
            state.callbacks[state.nextID] = callback
            return state.nextID
        }
        if id == nil { callback() }
        return id
    }

    public func remove(_ registration: Int?) {
        guard let registration else { return }
        _ = state.withLock { $0.callbacks.removeValue(forKey: registration) }
    }

    public func fire() {
        let callbacks = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.callbacks = [:] }
            return Array(state.callbacks.values)
        }
        for callback in callbacks { callback() }
    }
}
