import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `GET /img` memory-cache hits on the event loop, before the router: no task, no thread hop,
/// no middleware chain. Everything else (misses, errors, other routes, signed URLs) goes on to the
/// router untouched. The response is the router's, byte for byte in its headers (``MemoryHitResponder``
/// shares the image handler's and the observability middleware's code), and is counted and logged the same.
///
/// Only when no earlier request of the connection is still being answered by the router, so pipelined
/// responses keep their order.
final class MemoryHitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let responder: MemoryHitResponder
    /// Requests passed to the router whose response has not ended yet.
    private var forwarded = 0
    /// The answer to the request being read (its body and end are swallowed).
    private var answer: MemoryHitResponder.Answer?

    init(responder: MemoryHitResponder) {
        self.responder = responder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if forwarded == 0, let answer = responder.answer(head, client: context.channel.remoteAddress?.ipAddress) {
                self.answer = answer
                return
            }
            forwarded += 1
            context.fireChannelRead(data)
        case .body:
            if answer == nil { context.fireChannelRead(data) }
        case .end:
            guard let answer else { return context.fireChannelRead(data) }
            self.answer = nil
            context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
            if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            guard answer.close else { return context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil) }
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { forwarded = max(0, forwarded - 1) }
        context.write(data, promise: promise)
    }
}
