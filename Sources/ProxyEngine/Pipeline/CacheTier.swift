import ImageCore

/// Where a response came from; a bounded set, also a metric label.
public enum CacheTier: String, Sendable {
    case memory, disk, shared, miss
}
