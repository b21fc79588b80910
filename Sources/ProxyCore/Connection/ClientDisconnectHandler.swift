import ImageCore
import NIOCore
import NIOHTTPTypes
import ProxyEngine
import Synchronization

/// Tells a request that its client went away: the connection's input closed (the client closed its
/// socket; a waiting HTTP/1.1 client never half-closes), the connection failed, or it closed.
/// The image handler uses it to leave the download and transform queues at once.
final class ClientDisconnectHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    /// Shared with the request handlers of this connection.
    let signal = ClientDisconnectSignal()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent { signal.fire() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        signal.fire()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        signal.fire()
        context.fireErrorCaught(error)
    }
}

extension Channel {
    /// The disconnect signal of this connection, if the server installed the handler.
    func clientDisconnectSignal() async -> ClientDisconnectSignal? {
        try? await pipeline.handler(type: ClientDisconnectHandler.self).map { $0.signal }.get()
    }
}
