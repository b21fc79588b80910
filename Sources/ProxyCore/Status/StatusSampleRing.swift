import ImageCore
import ProxyEngine

/// The last `capacity` samples, oldest first; appending past capacity drops the oldest. A value type,
/// so that its arithmetic is tested on its own.
public struct StatusSampleRing: Sendable, Equatable {
    public let capacity: Int
    private var storage: [StatusSample] = []
    private var oldest = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a ring holds at least one sample")
        self.capacity = capacity
        storage.reserveCapacity(capacity)
    }

    public mutating func append(_ sample: StatusSample) {
        if storage.count < capacity {
            storage.append(sample)
        } else {
            storage[oldest] = sample
            oldest = (oldest + 1) % capacity
        }
    }

    /// Every held sample, oldest first.
    public var samples: [StatusSample] {
        Array(storage[oldest...] + storage[..<oldest])
    }

    public var count: Int { storage.count }
}
