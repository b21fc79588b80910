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
    /// `Connection: close`: close after the answer.
    var close = false

    /// What the next bytes of a connection hold.
    enum Framing: Equatable {
        /// The head is not complete yet: wait for more bytes.
        case incomplete
        /// A complete request without a body that may be a memory hit; `length` bytes long.
        case candidate(RawRequestHead, length: Int)
        /// A complete request without a body for the router; `length` bytes long.
        case ordinary(length: Int)
        /// Not framed here (a body, unusual syntax, too long): the HTTP decoder takes over.
        case unframed
    }

    /// Frames the request at the start of `bytes`; a head longer than `maxHeadBytes` is `unframed`.
    static func frame(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> Framing {
        var reader = LineReader(bytes: bytes, limit: maxHeadBytes)
        guard let requestLine = reader.nextLine() else { return reader.verdict }
        guard let (method, target, version) = split(requestLine: requestLine) else { return .unframed }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else { return .unframed }
        var head = RawRequestHead(path: target)
        var eligible = method == "GET" && version == "HTTP/1.1" && target.hasPrefix("/img?")
        var seen = Set<String>()
        while true {
            guard let line = reader.nextLine() else { return reader.verdict }
            if line.isEmpty { break }
            guard let (name, value) = split(headerLine: line) else { return .unframed }
            switch name {
            case "content-length":
                guard value == "0" else { return .unframed }
            case "transfer-encoding", "upgrade", "expect":
                return .unframed
            case "connection":
                if value.lowercased().contains("close") { head.close = true }
                if value.lowercased().contains("upgrade") { return .unframed }
            case "accept": head.accept = value
            case "if-none-match": head.ifNoneMatch = value
            case "cache-control": head.cacheControl = value
            case "x-request-id": head.requestID = value
            default: if name == Self.hopHeader { eligible = false }
            }
            // A repeated header the answer depends on is combined by HTTP rules: the router does that.
            if !seen.insert(name).inserted, Self.consulted.contains(name) { eligible = false }
        }
        return eligible ? .candidate(head, length: reader.offset) : .ordinary(length: reader.offset)
    }

    /// Our own loop marker (a request made by a proxy for its source): the router refuses it.
    private static let hopHeader = OriginFetcher.hopHeader.lowercased()

    /// The headers a memory-hit answer depends on.
    private static let consulted: Set<String> = ["accept", "if-none-match", "cache-control", "x-request-id", "connection"]

    private static func split(requestLine line: UnsafeRawBufferPointer) -> (String, String, String)? {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        guard parts[0].allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return nil }
        guard parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return (String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self),
                String(decoding: parts[2], as: UTF8.self))
    }

    /// `name: value` with the name lower-cased and the value trimmed; nil for anything but a token name.
    private static func split(headerLine line: UnsafeRawBufferPointer) -> (String, String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return nil }
        let name = line[..<colon]
        guard name.allSatisfy(isTokenByte) else { return nil }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ $0 >= 0x20 || $0 == 0x09 }), !value.contains(0x7F) else { return nil }
        return (String(decoding: name, as: UTF8.self).lowercased(), String(decoding: value, as: UTF8.self))
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
            verdict = bytes.count > limit ? .unframed : .incomplete
            return nil
        }
        guard newline > 0, rest[newline - 1] == UInt8(ascii: "\r"), offset + newline < limit else {
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
