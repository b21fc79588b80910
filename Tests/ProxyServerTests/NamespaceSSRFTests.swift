import Foundation
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// Every refused address class, as a literal and as a redirect target from an allowed origin, checked
/// with the real binary inside a network namespace that has loopback only (`unshare -rn`): no packet can
/// leave it even if the policy were wrong.
@Suite(.timeLimit(.minutes(2)), .enabled(if: networkNamespacesAvailable, "needs unshare -rn"))
struct NamespaceSSRFTests {
    @Test func refusedClassesAnswer403AtOnce() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/ssrf_in_namespace.py")
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-netns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: cache) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-rn", "python3", script.path, ServiceProcess.executableURL.path, cache.path]
        process.environment = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "unshare -rn and python3 are needed")
        let results = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [Double]], "\(String(decoding: data, as: UTF8.self))")
        #expect(results.count == 24)
        for (name, result) in results.sorted(by: { $0.key < $1.key }) {
            #expect(result[0] == 403, "\(name): \(result[0])")
            #expect(result[1] < 1, "\(name) refused without waiting: \(result[1]) s")
        }
    }
}

/// Whether this machine lets a process make a user + network namespace (`unshare -rn`).
let networkNamespacesAvailable: Bool = {
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    probe.arguments = ["-rn", "true"]
    probe.standardError = FileHandle.nullDevice
    guard (try? probe.run()) != nil else { return false }
    probe.waitUntilExit()
    return probe.terminationStatus == 0
}()
