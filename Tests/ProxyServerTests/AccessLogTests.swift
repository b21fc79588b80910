import Foundation
import Logging
import Testing

@testable import ProxyServer
@testable import ProxyEngine

/// The access log's direct rendering writes the bytes the structured handler writes for the same fields.
@Suite struct AccessLogTests {
    private static func entry(source: String?, stages: [(String, Int)]) -> AccessLog.Entry {
        AccessLog.Entry(
            requestID: "abc-1", method: "GET", route: "img", status: 200, bytes: "6807", cacheTier: "miss",
            total: .microseconds(61_042),
            stages: stages.map { RequestTimings.Stage(name: $0.0, duration: .microseconds($0.1)) },
            source: source, sourceHost: "example.com", client: "127.0.0.1")
    }

    /// Reads what `write` queued on a pipe-backed writer.
    private static func linesWritten(format: StructuredLogHandler.Format, _ write: (AccessLog) -> Void) throws -> [String] {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        let writer = LogLineWriter(descriptor: descriptors[1])
        let handler = StructuredLogHandler(label: "imageproxy.access", format: format, level: .info, writer: writer)
        write(AccessLog(logger: Logger(label: "imageproxy.access", factory: { _ in handler })))
        writer.flush()
        var bytes = [UInt8](repeating: 0, count: 65536)
        let count = read(descriptors[0], &bytes, bytes.count)
        close(descriptors[1])
        return String(decoding: bytes[0..<max(0, count)], as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// A line without its `time` field, which depends on the second it was written in.
    private static func withoutTime(_ line: String, format: StructuredLogHandler.Format) -> String {
        switch format {
        case .logfmt: line.replacing(#/^time=\S+ /#, with: "")
        case .json: line.replacing(#/^\{"time":"[^"]*",/#, with: "{")
        }
    }

    @Test(arguments: [StructuredLogHandler.Format.logfmt, .json])
    func directLinesEqualTheHandlersRendering(format: StructuredLogHandler.Format) throws {
        let entries = [
            Self.entry(source: nil, stages: [("transform", 30_000), ("fetch", 12_345), ("queue", 100), ("disk", 900)]),
            Self.entry(source: "https://example.com/a b\"c.jpg", stages: [("zeta", 5), ("disk_read", 77), ("alpha", 1)]),
        ]
        let lines = try Self.linesWritten(format: format) { log in entries.forEach(log.write) }
        #expect(lines.count == entries.count)
        for (line, entry) in zip(lines, entries) {
            let expected = StructuredLogHandler.render(
                time: Date(), level: .info, label: "imageproxy.access", message: "request",
                metadata: AccessLog.metadata(of: entry), format: format)
            #expect(Self.withoutTime(line, format: format) == Self.withoutTime(expected, format: format))
        }
        if format == .logfmt {
            #expect(
                Self.withoutTime(lines[0], format: .logfmt)
                    == "level=info label=imageproxy.access msg=request request_id=abc-1 method=GET route=img status=200 "
                    + "bytes=6807 cache=miss total_ms=61.0 disk_ms=0.9 fetch_ms=12.3 queue_ms=0.1 transform_ms=30.0 "
                    + "source_host=example.com client=127.0.0.1")
        }
    }

    /// Values are escaped byte by byte: multi-byte UTF-8 passes whole, JSON escapes control characters.
    @Test func escapingKeepsUTF8AndEscapesControls() {
        let metadata: Logger.Metadata = ["source": "https://example.com/café\u{1}\t\"x\" y.jpg"]
        let json = StructuredLogHandler.render(
            time: Date(), level: .info, label: "l", message: "m", metadata: metadata, format: .json)
        #expect(json.hasSuffix(#","source":"https://example.com/café\u0001\t\"x\" y.jpg"}"#))
        let logfmt = StructuredLogHandler.render(
            time: Date(), level: .info, label: "l", message: "m", metadata: metadata, format: .logfmt)
        #expect(logfmt.hasSuffix("source=\"https://example.com/café\u{1}\t\\\"x\\\" y.jpg\""))
        let decoded = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
        #expect(decoded?["source"] == "https://example.com/café\u{1}\t\"x\" y.jpg")
    }

    @Test func noLinesAboveInfo() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]); close(descriptors[1]) }
        let writer = LogLineWriter(descriptor: descriptors[1])
        let handler = StructuredLogHandler(label: "imageproxy.access", format: .logfmt, level: .warning, writer: writer)
        let log = AccessLog(logger: Logger(label: "imageproxy.access", factory: { _ in handler }))
        #expect(!log.isEnabled)
        log.write(Self.entry(source: nil, stages: []))
        writer.flush()
        #expect(fcntl(descriptors[0], F_SETFL, O_NONBLOCK) == 0)
        var byte: UInt8 = 0
        #expect(read(descriptors[0], &byte, 1) == -1, "nothing was written")
    }
}
