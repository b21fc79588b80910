import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ProxyServer
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
@testable import ImageCore
@testable import ProxyEngine
#endif

/// kill -9 of the real executable while it writes its disk cache, then a restart on the same folder.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CrashRecoveryTests {
    @Test func killDuringWritesNeverServesAPartialEntry() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-crash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let environment = [
            "IMAGEPROXY_CACHE_DIR": cache, "IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true", "IMAGEPROXY_LOG_LEVEL": "info",
        ]
        try await TestOrigin().makeApplication().test(.live) { origin in
            let widths = Array(40...159)
            let originPort = origin.port!
            let path: @Sendable (Int) -> String = { width in "/img?url=http://127.0.0.1:\(originPort)/photo.jpg&w=\(width)&format=png" }

            let first = try await ServiceProcess(environment: environment)
            let firstPort = first.port
            let load = widths.map { width in Task { try? await httpGet(port: firstPort, path: path(width)) } }
            try await Task.sleep(for: .milliseconds(150))
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(5)) != nil)
            var completed = 0
            for request in load where await request.value?.status == 200 { completed += 1 }
            #expect(completed < widths.count, "the kill came while requests (and their cache writes) were in flight")

            let second = try await ServiceProcess(environment: environment)
            for width in widths {
                let (status, body) = try await httpGet(port: second.port, path: path(width))
                #expect(status == 200)
                let image = try VipsImage.decode([UInt8](body))
                #expect(image.width == width, "width \(width) decodes whole")
            }
            second.signal(SIGTERM)
            #expect(await second.waitForExit(timeout: .seconds(10)) == 0)

            let reopened = try DiskCache(
                directory: cache, capacityBytes: 1 << 30, staleRetention: 0,
                logger: Logger(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
            #expect(reopened.recoveryReport == .init(), "index and folder agree after the restart")
            #expect(await reopened.usage().entries == widths.count + 1)
            await reopened.shutdown()

            // A corrupt index: the service still starts and serves.
            try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: cache + "/index.sqlite"))
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cache + "/index.sqlite" + suffix) }
            let third = try await ServiceProcess(environment: environment)
            let (status, body) = try await httpGet(port: third.port, path: path(55))
            #expect(status == 200)
            #expect(try VipsImage.decode([UInt8](body)).width == 55)
            third.signal(SIGTERM)
            #expect(await third.waitForExit(timeout: .seconds(10)) == 0)
        }
    }
}
