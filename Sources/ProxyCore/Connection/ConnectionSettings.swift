import NIOCore

/// What a connection may do and how long it may take (`server.*`): the connection handlers read these
/// directly. A new `server.*` key is its field here (with its documented default), its line in
/// ``ProxyConfiguration/settings`` and its line in `config/imageproxy.yaml`.
public struct ConnectionSettings: Sendable, Equatable {
    /// Milliseconds a connection may take to send its request headers, from connecting or from the
    /// end of the previous response (slowloris, idle keep-alive). Key `server.headerTimeoutMs`, default 10000.
    public var headerTimeoutMilliseconds = 10_000
    /// Milliseconds without any traffic before a connection is closed. Key `server.idleTimeoutMs`, default 60000.
    public var idleTimeoutMilliseconds = 60_000
    /// Open connections at most; beyond, new ones wait in the backlog. Key `server.maxConnections`, default 4096.
    public var maxConnections = 4096
    /// Largest request header block (request line included) in bytes. Key `server.maxHeaderBytes`, default 16384.
    public var maxHeaderBytes = 16_384
    /// Milliseconds a request body may take to arrive once its head is in (nginx's
    /// `client_body_timeout`); then the connection is closed. Key `server.bodyTimeoutMs`, default 10000.
    public var bodyTimeoutMilliseconds = 10_000
    /// Whether memory hits are answered from the connection's bytes in front of the HTTP decoder
    /// (off: every request goes through the decoder and the router; the answers are the same).
    /// Key `server.memoryHitFastPath`, default true.
    public var memoryHitFastPath = true
    public init() {}
}

extension ConnectionSettings {
    var headerTimeout: TimeAmount { .milliseconds(Int64(headerTimeoutMilliseconds)) }
    var idleTimeout: TimeAmount { .milliseconds(Int64(idleTimeoutMilliseconds)) }
    var bodyTimeout: TimeAmount { .milliseconds(Int64(bodyTimeoutMilliseconds)) }
}
