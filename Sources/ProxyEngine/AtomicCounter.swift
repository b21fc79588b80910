import ImageCore
import Synchronization

/// An integer shared between threads. A class, so that types with throwing initialisers can hold one
/// (Swift 6.3's optimiser crashes on a `~Copyable` `Atomic` stored directly in such a class).
public final class AtomicCounter: Sendable {
    private let storage: Atomic<Int>

    public init(_ value: Int = 0) {
        storage = Atomic(value)
    }

    public var value: Int { storage.load(ordering: .acquiring) }

    public func store(_ value: Int) { storage.store(value, ordering: .releasing) }

    public func add(_ amount: Int) { storage.add(amount, ordering: .relaxed) }

    public func subtract(_ amount: Int) { storage.subtract(amount, ordering: .relaxed) }

    /// Adds one and returns the new value.
    public func increment() -> Int { storage.add(1, ordering: .relaxed).newValue }
}

/// A value behind a lock, held by reference (for the same reason as ``AtomicCounter``).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&$0) }
    }
}
