import HTTPTypes
import HummingbirdCore
import ImageCore
import NIOCore
import NIOHTTPTypes
import ProxyEngine

/// Closes a connection whose request headers do not arrive in time: from the connection's start, and
/// from the end of each response to the next request (slowloris; also bounds idle keep-alive); and one
/// whose request body does not arrive within `bodyDeadline` of its head (a `Content-Length: 1000` with no
/// body would otherwise hold the connection forever).
final class HeaderDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let deadline: TimeAmount
    private let bodyDeadline: TimeAmount?
    private var timer: Scheduled<Void>?
    private var bodyTimer: Scheduled<Void>?
    /// When ``MemoryHitHandler`` (in front of the decoder) last answered a request while armed: the
    /// deadline then counts from that answer. Checked when the timer fires rather than re-arming the
    /// timer for every answer (a scheduled task per request costs more than the answer itself).
    private var answeredInFrontAt: NIODeadline?

    init(deadline: TimeAmount, bodyDeadline: TimeAmount? = nil) {
        self.deadline = deadline
        self.bodyDeadline = bodyDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        bodyTimer?.cancel()
        bodyTimer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            disarm()
            armBody(context)
        case .end:
            bodyTimer?.cancel()
            bodyTimer = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    /// From a head to its end: the body's whole time is bounded (cancelled at once for bodiless requests).
    private func armBody(_ context: ChannelHandlerContext) {
        guard let bodyDeadline else { return }
        bodyTimer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        bodyTimer = context.eventLoop.scheduleTask(in: bodyDeadline) {
            let (handler, context) = loopBound.value
            handler.bodyTimer = nil
            context.close(promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { arm(context) }
        context.write(data, promise: promise)
    }

    /// A request was answered in front of the decoder: the next head has `deadline` from now.
    func noteAnsweredInFront() {
        answeredInFrontAt = .now()
    }

    private func arm(_ context: ChannelHandlerContext) {
        disarm()
        schedule(context, at: .now() + deadline)
    }

    private func schedule(_ context: ChannelHandlerContext, at instant: NIODeadline) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: instant) {
            let (handler, context) = loopBound.value
            handler.timer = nil
            if let answered = handler.answeredInFrontAt {
                handler.answeredInFrontAt = nil
                return handler.schedule(context, at: answered + handler.deadline)
            }
            context.close(promise: nil)
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
        answeredInFrontAt = nil
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
        bodyTimer?.cancel()
        bodyTimer = nil
    }
}
