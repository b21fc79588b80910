import ImageCore

/// A watermark image could not be had: the status of the underlying failure (404, 502, 504, ...), with a
/// message saying it was the watermark, not the source.
public struct OverlayFetchError: PublicError {
    /// What went wrong while fetching the watermark image.
    public let underlying: any PublicError

    public var httpStatus: Int { underlying.httpStatus }
    public var publicMessage: String { "watermark image: \(underlying.publicMessage)" }
    public var reason: String { underlying.reason }
}
