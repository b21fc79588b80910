import NIOCore
import NIOHTTPTypes

/// Owns a connection's time limits (``ConnectionTimeLimits``: header, body, idle) and its one timer.
/// It sits behind the HTTP decoder and sees the router's requests and responses; ``MemoryHitHandler``, in
/// front of the decoder, tells it of every read and of each request it answers itself, and asks it how
/// many requests the router is answering (it answers from the bytes only while none is, so pipelined
/// answers keep their order).
final class ConnectionTimeLimitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var limits: ConnectionTimeLimits
    private var timer: Scheduled<Void>?
    /// The instant the timer is set for.
    private var timerDue: NIODeadline?

    init(settings: ConnectionSettings) {
        limits = ConnectionTimeLimits(settings: settings, start: .now())
    }

    /// Requests the router has read and not yet answered to their end.
    var routerRequestsInProgress: Int { limits.routerRequestsInProgress }

    /// Bytes arrived (told by the handler in front of the decoder, which sees them all).
    func noteBytesRead() {
        limits.bytesRead(at: .now())
    }

    /// A request was answered in front of the decoder.
    func noteAnsweredInFront() {
        limits.answeredInFront(at: .now())
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            limits.routerReadHead(at: .now())
            rearmIfEarlier(context)
        case .end:
            limits.routerReadEnd()
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            limits.routerAnswered(at: .now())
            rearmIfEarlier(context)
        }
        context.write(data, promise: promise)
    }

    private func start(_ context: ChannelHandlerContext) {
        limits = ConnectionTimeLimits(
            headerLimit: limits.headerLimit, bodyLimit: limits.bodyLimit, idleLimit: limits.idleLimit, start: .now())
        cancelTimer()
        rearmIfEarlier(context)
    }

    /// Sets the timer for the limits' next check when that comes before the instant it is set for.
    private func rearmIfEarlier(_ context: ChannelHandlerContext) {
        guard let next = limits.nextCheck else { return }
        if let timerDue, timerDue <= next { return }
        schedule(context, at: next)
    }

    private func schedule(_ context: ChannelHandlerContext, at instant: NIODeadline) {
        timer?.cancel()
        timerDue = instant
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: instant) {
            let (handler, context) = loopBound.value
            handler.timer = nil
            handler.timerDue = nil
            switch handler.limits.verdict(at: .now()) {
            case .close:
                context.close(promise: nil)
            case .checkAgain(let instant):
                if let instant { handler.schedule(context, at: instant) }
            }
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
        timerDue = nil
    }
}
