import NIOCore
import NIOHTTPTypes
import Synchronization
import ImageCore

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

/// Fires once, when a connection's client is gone; runs the callbacks registered until then.
final class ClientDisconnectSignal: Sendable {
    private struct State {
        var fired = false
        var callbacks: [Int: @Sendable () -> Void] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Runs `callback` when the client goes away (at once if it already has). Returns a registration
    /// to pass to ``remove(_:)`` when no longer interested.
    func onDisconnect(_ callback: @escaping @Sendable () -> Void) -> Int? {
        let id = state.withLock { state -> Int? in
            guard !state.fired else { return nil }
            defer { state.nextID += 1 }
            state.callbacks[state.nextID] = callback
            return state.nextID
        }
        if id == nil { callback() }
        return id
    }

    func remove(_ registration: Int?) {
        guard let registration else { return }
        _ = state.withLock { $0.callbacks.removeValue(forKey: registration) }
    }

    func fire() {
        let callbacks = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.callbacks = [:] }
            return Array(state.callbacks.values)
        }
        for callback in callbacks { callback() }
    }
}

extension Channel {
    /// The disconnect signal of this connection, if the server installed the handler.
    func clientDisconnectSignal() async -> ClientDisconnectSignal? {
        try? await pipeline.handler(type: ClientDisconnectHandler.self).map { $0.signal }.get()
    }
}
