import ImageCore
import NIOCore
import NIOHTTPTypes
import ProxyEngine

/// Counts the requests of a connection that the router is answering (heads read, responses not yet
/// ended), for ``MemoryHitHandler``: it answers from the bytes only while none is, so that pipelined
/// answers keep their order, and it does not close an idle connection while one is.
final class RouterRequestTracker: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests read and not yet answered in full.
    private(set) var inProgress = 0
    /// Called on the event loop when a response has been written to its end.
    var onResponseEnd: () -> Void = {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { inProgress += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inProgress = max(0, inProgress - 1)
            onResponseEnd()
        }
        context.write(data, promise: promise)
    }
}
