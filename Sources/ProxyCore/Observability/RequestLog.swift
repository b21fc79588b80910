import Foundation
import ImageCore
import ProxyEngine
import Synchronization

/// The last error answers, for the status page; at most `errorCapacity` kept. (Rates and percentiles
/// come from ``StatusHistory``.)
public final class RequestLog: Sendable {
    /// One error answer.
    public struct ErrorRecord: Sendable {
        public var time: Double
        public var route: String
        public var status: Int
        public var reason: String
        public var requestID: String
    }

    private let errors = Mutex<[ErrorRecord]>([])
    private let errorCapacity: Int

    public init(errorCapacity: Int = 20) {
        self.errorCapacity = errorCapacity
    }

    public func recordError(_ error: ErrorRecord) {
        errors.withLock { errors in
            errors.append(error)
            if errors.count > errorCapacity { errors.removeFirst(errors.count - errorCapacity) }
        }
    }

    /// The last errors, newest first.
    public var lastErrors: [ErrorRecord] { errors.withLock { $0.reversed() } }
}
