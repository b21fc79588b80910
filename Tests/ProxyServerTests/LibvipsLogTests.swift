import Foundation
import HTTPTypes
import ImageCore
import Logging
import Synchronization
import Testing
import TestSupport

@testable import ProxyServer
@testable import ProxyEngine

/// libvips' messages through the real GLib route, the real forwarder and the real server (issue #29):
/// nothing grows with the number of messages, and a line names only the request that caused it.
@Suite(.timeLimit(.minutes(2))) struct LibvipsLogTests {
    /// CPU time of the calling thread, in nanoseconds.
    private static func threadCPUNanoseconds() -> Int {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return spec.tv_sec * 1_000_000_000 + spec.tv_nsec
    }

    @Test func twentyThousandMessagesCostTheSameEachAndTheServerLives() async throws {
        let store = RecordingLogHandler.Store()
        let logger = Logger(label: "proxy", factory: { _ in RecordingLogHandler(store: store) })
        let configuration = testConfiguration()
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        let origin = TestOrigin(["/a.jpg": .jpeg(try TestImages.noiseJPEG(width: 64, height: 48))])
        try await origin.run { base in
            try await withProxy(configuration, logger: logger) { proxy, _ in
                // Every message is read through the sink the server installed; on the code of issue #29
                // each read deepened a chain of thunks and the process died after about 12,000.
                var batches: [Int] = []
                for _ in 0..<20 {
                    let start = Self.threadCPUNanoseconds()
                    for _ in 0..<1000 { VipsLog.emitWarningForTesting(domain: "VipsJpeg", "Corrupt JPEG data: test") }
                    batches.append(Self.threadCPUNanoseconds() - start)
                }
                let first = batches[0], last = batches[19]
                // Flat within noise: a growing chain makes the last thousand many times the first.
                #expect(last <= 3 * first + 5_000_000, "CPU per thousand messages \(batches)")
                let response = try await proxy.image([("url", base + "/a.jpg"), ("w", "32")])
                #expect(response.status == .ok, "the server still answers")
            }
        }
        let lines = store.entries.filter { $0["message"] == "libvips message" }
        #expect(!lines.isEmpty && lines.count < 20_000, "rate-limited lines reached the logger")
    }

    @Test func aLineNamesOnlyTheRequestWhoseThreadEmittedIt() async throws {
        let store = RecordingLogHandler.Store()
        let logger = Logger(label: "proxy", factory: { _ in RecordingLogHandler(store: store) })
        let pool = TransformPool(workers: 2)
        pool.start()
        LibvipsLogForwarder(logger: logger, perSecond: 1_000_000, soleRunningRequestID: { pool.soleRunningRequestID })
            .install()
        // Two jobs run side by side on two pool threads; each emits messages naming itself, while an
        // untagged thread emits too. On the code of issue #29 every line carried both ids.
        let started = Rendezvous()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in ["req-a", "req-b"] {
                group.addTask {
                    try await pool.run(requestID: id) {
                        started.arrive()
                        while started.count < 2 { usleep(100) }
                        for index in 0..<300 { VipsLog.emitWarningForTesting(domain: "VipsTest", "owner=\(id) \(index)") }
                        started.leaveAfterOthers()
                    }
                }
            }
            group.addTask {
                while started.count < 2 { usleep(100) }
                for index in 0..<100 { VipsLog.emitWarningForTesting(domain: "VipsTest", "owner=none \(index)") }
                started.leaveAfterOthers()
            }
            try await group.waitForAll()
        }
        try await pool.shutdown()
        let lines = store.entries.filter { $0["message"] == "libvips message" && $0["domain"] == "VipsTest" }
        #expect(lines.count == 700)
        for line in lines {
            let text = line["text"] ?? ""
            if text.hasPrefix("owner=req-a") { #expect(line["request_id"] == "req-a", "\(line)") }
            if text.hasPrefix("owner=req-b") { #expect(line["request_id"] == "req-b", "\(line)") }
            if text.hasPrefix("owner=none") { #expect(line["request_id"] == nil, "\(line)") }
            #expect(line["request_ids"] == nil)
        }
    }
}

/// A tiny rendezvous for the threads above: how many arrived, and a barrier before leaving so that all
/// three emit while the others still run.
private final class Rendezvous: Sendable {
    private let state = Mutex<(arrived: Int, leaving: Int)>((0, 0))
    var count: Int { state.withLock { $0.arrived } }
    func arrive() { state.withLock { $0.arrived += 1 } }
    func leaveAfterOthers() {
        state.withLock { $0.leaving += 1 }
        while state.withLock({ $0.leaving }) < 3 { usleep(100) }
    }
}
