import Foundation
import Testing

/// The executable's allocator: jemalloc, linked in and serving malloc, named in the start-up line; and
/// when something takes `malloc` ahead of it (here glibc's own, preloaded), the service notices and
/// falls back to bounding glibc's heaps.
@Suite(.timeLimit(.minutes(1))) struct AllocatorTests {
    private static func startLine(environment: [String: String]) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alloc-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let service = try await ServiceProcess(environment: ["IMAGEPROXY_CACHE_DIR": folder].merging(environment) { $1 })
        defer {
            service.signal(SIGKILL)
        }
        let (status, _) = try await httpGet(port: service.port, path: "/health")
        #expect(status == 200)
        return service.standardError.split(separator: "\n").first { $0.contains("msg=starting") }.map(String.init) ?? ""
    }

    @Test func theServiceRunsOnJemalloc() async throws {
        let line = try await Self.startLine(environment: [:])
        #expect(line.contains(#"allocator="jemalloc 5."#), "start line: \(line)")
    }

    @Test func glibcTakingMallocIsNoticed() async throws {
        let line = try await Self.startLine(environment: ["LD_PRELOAD": "libc.so.6"])
        #expect(line.contains("allocator=glibc"), "start line: \(line)")
    }
}
