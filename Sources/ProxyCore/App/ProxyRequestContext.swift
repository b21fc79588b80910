import Hummingbird
import ImageCore
import NIOCore
import ProxyEngine

/// The request context of every route: Hummingbird's core storage plus this request's timings,
/// its request id and the client's address.
public struct ProxyRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Stage timings and the answering cache tier, for Server-Timing and the access log.
    public let timings: RequestTimings
    /// The client's address.
    public let remoteAddress: SocketAddress?
    /// The connection, to learn when its client goes away.
    let channel: (any Channel)?
    /// The `X-Request-Id` (echoed from the client or generated); set by the observability middleware.
    public var requestID: String = ""

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        timings = RequestTimings()
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}
