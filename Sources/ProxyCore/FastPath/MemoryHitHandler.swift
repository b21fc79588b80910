import ImageCore
import NIOCore
import ProxyEngine

/// Answers `GET /img` memory-cache hits straight from the connection's bytes, in front of NIO's HTTP
/// decoder: no header parsing beyond what the answer needs, no task, no thread hop, no middleware
/// chain, one buffer written for the head. Everything else (misses, errors, other routes, signed URLs,
/// requests with a body) goes on to the decoder and the router untouched, one whole request at a time.
/// The response is the router's, header for header (``MemoryHitResponder`` shares the image handler's
/// and the observability middleware's code), and is counted and logged the same.
///
/// It answers only while the router has no request of the connection in hand, so pipelined responses
/// keep their order. The handlers behind it never see the requests it answers, so it tells
/// ``ConnectionTimeLimitHandler`` (which owns the connection's time limits) of every read and answer.
final class MemoryHitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let responder: MemoryHitResponder
    private let timeLimits: ConnectionTimeLimitHandler
    private let maxHeadBytes: Int
    /// The start of a request whose head is not complete yet.
    private var pending: ByteBuffer?
    /// Once a request could not be framed here, the decoder reads everything that follows.
    private var passthrough = false
    /// An oversized head was refused: what follows is read and dropped until the connection closes.
    private var draining = false
    /// `server.memoryHitFastPath`: off, requests are framed here (oversized heads still get 431) but
    /// every one goes to the decoder.
    private let answersHits: Bool
    /// The client's address as the access log writes it, read once a connection (its peer does not change).
    private var clientAddress: String??

    init(responder: MemoryHitResponder, timeLimits: ConnectionTimeLimitHandler, maxHeadBytes: Int, answersHits: Bool = true) {
        self.answersHits = answersHits
        self.responder = responder
        self.timeLimits = timeLimits
        self.maxHeadBytes = maxHeadBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        timeLimits.noteBytesRead()
        if draining { return }
        if passthrough { return context.fireChannelRead(data) }
        var buffer = unwrapInboundIn(data)
        if var earlier = pending {
            pending = nil
            let known = earlier.readableBytes
            earlier.writeBuffer(&buffer)
            buffer = earlier
            // A head arriving in pieces is framed again only when the new bytes could decide it (so a
            // slow head costs linear, not quadratic, time): an end of head, a bare LF or a folded line.
            let mayDecide = buffer.withUnsafeReadableBytes { RawRequestHead.mayDecideFraming($0, newFrom: known) }
            if !mayDecide && buffer.readableBytes <= maxHeadBytes {
                pending = buffer
                return
            }
        }
        var answered = false
        defer {
            if answered {
                context.flush()
                timeLimits.noteAnsweredInFront()
            }
        }
        while buffer.readableBytes > 0 {
            let framing = buffer.withUnsafeReadableBytes { RawRequestHead.frame($0, maxHeadBytes: maxHeadBytes) }
            switch framing {
            case .incomplete:
                pending = buffer
                return
            case .unframed:
                passthrough = true
                return context.fireChannelRead(wrapInboundOut(buffer))
            case .tooLarge:
                passthrough = true
                // With an earlier request still being answered the decoder reports it (400), in order.
                guard timeLimits.routerRequestsInProgress == 0 else { return context.fireChannelRead(wrapInboundOut(buffer)) }
                return refuseOversizedHead(context)
            case .ordinary(let length):
                context.fireChannelRead(wrapInboundOut(buffer.readSlice(length: length)!))
            case .candidate(let head, let length):
                guard answersHits, timeLimits.routerRequestsInProgress == 0,
                    let answer = responder.answer(
                        head, client: client(of: context), allocator: context.channel.allocator)
                else {
                    context.fireChannelRead(wrapInboundOut(buffer.readSlice(length: length)!))
                    continue
                }
                buffer.moveReaderIndex(forwardBy: length)
                answered = true
                guard answer.close else {
                    context.write(NIOAny(answer.bytes), promise: nil)
                    continue
                }
                // Closed once written; whatever the client sent after `Connection: close` is not answered.
                let written = context.eventLoop.makePromise(of: Void.self)
                context.write(NIOAny(answer.bytes), promise: written)
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
                return
            }
        }
    }

    /// The connection's peer address (``clientAddress``), formatted on its first hit.
    private func client(of context: ChannelHandlerContext) -> String? {
        if let known = clientAddress { return known }
        let address = context.channel.remoteAddress?.ipAddress
        clientAddress = .some(address)
        return address
    }

    /// Answers 431 and closes like nginx's lingering close: the output side first (the client reads
    /// the answer and an end of stream), the rest of the oversized head read and dropped, then the
    /// whole connection after a second (closing with unread bytes would reset it and lose the answer).
    private func refuseOversizedHead(_ context: ChannelHandlerContext) {
        draining = true
        let answer = Self.headTooLarge(limit: maxHeadBytes, allocator: context.channel.allocator)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(answer), promise: written)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in
            let context = loopBound.value
            context.close(mode: .output, promise: nil)
            context.eventLoop.scheduleTask(in: .seconds(1)) { loopBound.value.close(promise: nil) }
        }
    }

    /// `431 Request Header Fields Too Large`, naming the limit; the connection closes after it.
    static func headTooLarge(limit: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        let message = "request head is larger than server.maxHeaderBytes (\(limit) bytes)\n"
        var bytes = allocator.buffer(capacity: 256 + message.utf8.count)
        bytes.writeString(
            "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: \(message.utf8.count)\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
                + "Connection: close\r\n\r\n" + message)
        return bytes
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client stopped sending: a partial head goes to the decoder, which reports it.
        if case .inputClosed = event as? ChannelEvent, let pending {
            self.pending = nil
            passthrough = true
            context.fireChannelRead(wrapInboundOut(pending))
        }
        context.fireUserInboundEventTriggered(event)
    }
}
