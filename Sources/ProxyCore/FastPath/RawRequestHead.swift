// The fuzz targets compile this file with ImageCore's request files in one module (-D FUZZ_STANDALONE).
#if !FUZZ_STANDALONE
import ImageCore
#endif

/// An HTTP/1.1 request head read straight from a connection's bytes, for ``MemoryHitHandler``.
///
/// The parser only has to decide three things: where the request ends, whether it can be a memory
/// hit (`GET /img?...` over HTTP/1.1 without a body or anything unusual), and the few headers such an
/// answer depends on. Anything it does not fully understand is left to NIO's HTTP decoder: a request
/// it can frame (a complete head, no body) goes there on its own, and from anything it cannot frame
/// (a body, bare LF line ends, obsolete line folding, an oversized head) on, the whole connection does.
struct RawRequestHead: Equatable, Sendable {
    /// The request target, e.g. `/img?url=...&w=300`.
    var path: String
    var accept: String?
    var ifNoneMatch: String?
    var cacheControl: String?
    var requestID: String?
    /// The W3C trace context (`traceparent`, `tracestate`), as sent; parsed by the tracer when tracing is on.
    var traceparent: String?
    var tracestate: String?
    /// `Connection: close`: close after the answer.
    var close = false
    /// A `HEAD` request: answered with the headers of the `GET` and no body.
    var isHead = false

    /// `OriginFetcher.hopHeader`, lower-cased (a test keeps them equal): written out here so that this
    /// parser compiles on its own, into its fuzz target (`fuzz/raw_request_head`).
    static let hopHeaderName = "x-imageproxy-hop"

    /// What the next bytes of a connection hold.
    enum Framing: Equatable {
        /// The head is not complete yet: wait for more bytes.
        case incomplete
        /// A complete request without a body that may be a memory hit; `length` bytes long.
        case candidate(RawRequestHead, length: Int)
        /// A complete request without a body for the router; `length` bytes long.
        case ordinary(length: Int)
        /// Not framed here (a body, unusual syntax): the HTTP decoder takes over.
        case unframed
        /// The head is longer than the limit (`server.maxHeaderBytes`): answered 431, then closed.
        case tooLarge
    }

    /// Frames the request at the start of `bytes`; a head longer than `maxHeadBytes` is `tooLarge`.
    static func frame(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> Framing {
        var reader = LineReader(bytes: bytes, limit: maxHeadBytes)
        guard let requestLine = reader.nextLine() else { return reader.verdict }
        guard let (method, target, version) = split(requestLine: requestLine) else { return .unframed }
        // HTTP/1.0 (keep-alive rules of its own), CONNECT (the decoder then reads everything after it
        // as a tunnel) and unknown methods: the whole connection goes to the decoder, so that no answer
        // is ever sent past a request the decoder has not finished.
        let http11 = version.elementsEqual("HTTP/1.1".utf8)
        guard http11, Self.framedMethods.contains(where: { method.elementsEqual($0) }) else { return .unframed }
        let imagePrefix = "/img?".utf8
        let isHead = method.elementsEqual("HEAD".utf8)
        var eligible = (isHead || method.elementsEqual("GET".utf8)) && target.starts(with: imagePrefix)
        var head = RawRequestHead(path: "", isHead: isHead)
        var seen = 0
        while true {
            guard let line = reader.nextLine() else { return reader.verdict }
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return .unframed }
            let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
            guard name.allSatisfy(isTokenByte), let value = trimmedValue(line[(colon + 1)...]) else { return .unframed }
            guard let header = Header(name) else { continue }
            // A repeated header is combined by HTTP rules: the router does that.
            if seen & (1 << header.rawValue) != 0 { eligible = false }
            seen |= 1 << header.rawValue
            switch header {
            case .contentLength:
                guard value.elementsEqual("0".utf8) else { return .unframed }
            case .transferEncoding, .upgrade, .expect:
                return .unframed
            case .connection:
                let tokens = String(decoding: value, as: UTF8.self).lowercased()
                if tokens.contains("upgrade") { return .unframed }
                if tokens.contains("close") { head.close = true }
            case .accept: head.accept = String(decoding: value, as: UTF8.self)
            case .ifNoneMatch: head.ifNoneMatch = String(decoding: value, as: UTF8.self)
            case .cacheControl: head.cacheControl = String(decoding: value, as: UTF8.self)
            case .requestID: head.requestID = String(decoding: value, as: UTF8.self)
            case .traceparent: head.traceparent = String(decoding: value, as: UTF8.self)
            case .tracestate: head.tracestate = String(decoding: value, as: UTF8.self)
            case .hop, .clientDependent: eligible = false
            }
        }
        guard eligible else { return .ordinary(length: reader.offset) }
        head.path = String(decoding: target, as: UTF8.self)
        return .candidate(head, length: reader.offset)
    }

    /// Whether bytes from `start` on (with the three before them) hold what can end a pending head's
    /// framing: CRLF CRLF or LF LF (the head's end), a LF without its CR, or a line folded onto the next.
    /// Lines ending in CRLF alone cannot: the head is still incomplete (a folded line is seen when the
    /// byte after its CRLF arrives).
    static func mayDecideFraming(_ bytes: UnsafeRawBufferPointer, newFrom start: Int) -> Bool {
        var index = max(0, start - 3)
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") {
                if index == 0 || bytes[index - 1] != UInt8(ascii: "\r") { return true }  // bare LF
                if index >= 2 && bytes[index - 2] == UInt8(ascii: "\n") { return true }  // CRLF CRLF
                if index + 1 < bytes.count, bytes[index + 1] == 0x20 || bytes[index + 1] == 0x09 { return true }  // folded
            }
            index += 1
        }
        return false
    }

    /// Methods whose requests are framed here (the rest, CONNECT and unknown ones included, are not).
    private static let framedMethods: [[UInt8]] = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"].map { Array($0.utf8) }

    /// The headers that matter here (everything else is passed over).
    private enum Header: Int {
        case contentLength, transferEncoding, upgrade, expect, connection, accept, ifNoneMatch, cacheControl, requestID, hop
        case traceparent, tracestate
        /// `Origin`, client hints, `Save-Data`: they may change the answer, so the router answers.
        case clientDependent

        private static let names: [(Header, [UInt8])] = [
            (.contentLength, Array("content-length".utf8)), (.transferEncoding, Array("transfer-encoding".utf8)),
            (.upgrade, Array("upgrade".utf8)), (.expect, Array("expect".utf8)), (.connection, Array("connection".utf8)),
            (.accept, Array("accept".utf8)), (.ifNoneMatch, Array("if-none-match".utf8)),
            (.cacheControl, Array("cache-control".utf8)), (.requestID, Array("x-request-id".utf8)),
            (.hop, Array(RawRequestHead.hopHeaderName.utf8)), (.traceparent, Array("traceparent".utf8)),
            (.tracestate, Array("tracestate".utf8)),
        ] + (["Origin", ClientHints.saveDataHeader] + ClientHints.hintHeaders)
            .map { (.clientDependent, Array($0.lowercased().utf8)) }

        /// The header named `name` (any case), or nil for one that does not matter here.
        init?(_ name: UnsafeRawBufferPointer) {
            for (header, known) in Self.names where known.count == name.count {
                if zip(name, known).allSatisfy({ ($0 | 0x20) == $1 || $0 == $1 }) {
                    self = header
                    return
                }
            }
            return nil
        }
    }

    private typealias Bytes = Slice<UnsafeRawBufferPointer>

    private static func split(requestLine line: UnsafeRawBufferPointer) -> (Bytes, Bytes, Bytes)? {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        guard parts[0].allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return nil }
        guard parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return (parts[0], parts[1], parts[2])
    }

    /// A header value without its surrounding whitespace; nil when it holds control characters.
    private static func trimmedValue(_ raw: Bytes) -> Bytes? {
        var value = raw
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ ($0 >= 0x20 || $0 == 0x09) && $0 != 0x7F }) else { return nil }
        return value
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// CRLF-terminated lines from the start of a buffer, refusing bare LF and folded lines.
private struct LineReader {
    let bytes: UnsafeRawBufferPointer
    let limit: Int
    /// Where the next line starts.
    private(set) var offset = 0
    /// Why the last `nextLine()` returned nil.
    private(set) var verdict = RawRequestHead.Framing.incomplete

    init(bytes: UnsafeRawBufferPointer, limit: Int) {
        self.bytes = bytes
        self.limit = limit
    }

    /// The next line without its CRLF; nil when incomplete or refused (see `verdict`).
    mutating func nextLine() -> UnsafeRawBufferPointer? {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")) else {
            verdict = bytes.count > limit ? .tooLarge : .incomplete
            return nil
        }
        guard offset + newline < limit else {
            verdict = .tooLarge
            return nil
        }
        guard newline > 0, rest[newline - 1] == UInt8(ascii: "\r") else {
            verdict = .unframed
            return nil
        }
        let line = UnsafeRawBufferPointer(rebasing: rest[..<(newline - 1)])
        if offset > 0, let first = line.first, first == 0x20 || first == 0x09 {
            verdict = .unframed
            return nil
        }
        offset += newline + 1
        return line
    }
}
