import HummingbirdCore
import ImageCore
import Logging
import NIOCore
import ProxyEngine

/// Hummingbird's HTTP/1.1 channel with ``MemoryHitHandler`` in front of the HTTP decoder, and the
/// connection handlers of this service behind it: ``ConnectionTimeLimitHandler`` (header, body and idle
/// limits, told of the front's reads and answers) and ``ClientDisconnectHandler``.
struct ProxyHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    private let http1: HTTP1Channel
    private let memoryHits: MemoryHitResponder
    /// Time limits, the header size, and whether ``MemoryHitHandler`` answers memory hits (`server.*`).
    private let limits: ConnectionSettings

    init(responder: @escaping HTTPChannelHandler.Responder, memoryHits: MemoryHitResponder, limits: ConnectionSettings) {
        http1 = HTTP1Channel(responder: responder)
        self.memoryHits = memoryHits
        self.limits = limits
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeLimits = ConnectionTimeLimitHandler(settings: limits)
        let front = MemoryHitHandler(
            responder: memoryHits, timeLimits: timeLimits, maxHeadBytes: limits.maxHeaderBytes,
            answersHits: limits.memoryHitFastPath)
        do {
            try channel.pipeline.syncOperations.addHandler(front)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let behind = NIOLoopBound(timeLimits, eventLoop: channel.eventLoop)
        let configuration = HTTP1Channel.Configuration(
            additionalChannelHandlers: [behind.value, ClientDisconnectHandler()],
            idleTimeout: nil,
            httpDecoderConfiguration: .init(maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes))
        return HTTP1Channel(responder: http1.responder, configuration: configuration).setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}
