import Synchronization

/// Runs one piece of work per key at a time: callers with the same key while it runs wait for its
/// result instead of starting their own (N identical requests, one download or one transform).
final class SingleFlight<Value: Sendable>: Sendable {
    private let running = Mutex<[String: Task<Value, any Error>]>([:])

    /// Joins the work running under `key`, or starts `work`. `onJoin` is called when joining.
    func run(
        key: String, onJoin: () -> Void, _ work: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let (task, joined) = running.withLock { running -> (Task<Value, any Error>, Bool) in
            if let existing = running[key] { return (existing, true) }
            let task = Task { try await work() }
            running[key] = task
            return (task, false)
        }
        if joined {
            onJoin()
            return try await task.value
        }
        defer { _ = running.withLock { $0.removeValue(forKey: key) } }
        return try await task.value
    }

    /// Keys with work under way.
    var count: Int { running.withLock { $0.count } }

    /// Whether work runs under `key` now.
    func isRunning(_ key: String) -> Bool { running.withLock { $0[key] != nil } }
}
