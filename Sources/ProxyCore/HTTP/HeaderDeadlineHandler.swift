import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request headers do not arrive in time: from the connection's start, and
/// from the end of each response to the next request (slowloris; also bounds idle keep-alive).
final class HeaderDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?
    /// When ``MemoryHitHandler`` (in front of the decoder) last answered a request while armed: the
    /// deadline then counts from that answer. Checked when the timer fires rather than re-arming the
    /// timer for every answer (a scheduled task per request costs more than the answer itself).
    private var answeredInFrontAt: NIODeadline?

    init(deadline: TimeAmount) {
        self.deadline = deadline
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
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { disarm() }
        context.fireChannelRead(data)
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
}
