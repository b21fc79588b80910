import Foundation
import ProxyCore
import Testing

@testable import ImageCore
@testable import ProxyEngine

@Suite struct ConfigurationTests {
    private func temporaryFile(_ text: String, extension fileExtension: String = "yaml") throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-\(UUID().uuidString).\(fileExtension)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func shippedFileMatchesEmbeddedDefaults() async throws {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let shipped = packageRoot.appendingPathComponent("config/imageproxy.yaml").path
        let loaded = try await ProxyConfiguration.load(filePath: shipped, environment: [:])
        #expect(loaded == ProxyConfiguration())
    }

    @Test func environmentOverridesFileWhichOverridesDefaults() async throws {
        let path = try temporaryFile("bind: 0.0.0.0:9000\ncache:\n  dir: /tmp/from-file\nfetch:\n  timeoutMs: 2500\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let loaded = try await ProxyConfiguration.load(
            filePath: path,
            environment: [
                "IMAGEPROXY_BIND": "127.0.0.2:8181", "IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true",
                "IMAGEPROXY_ALLOW_PRIVATE_SOURCES": "1", "IMAGEPROXY_CACHE_MEMORY_BYTES": "1024", "PATH": "/usr/bin",
            ])
        #expect(loaded.bind == ListenAddress(host: "127.0.0.2", port: 8181))
        #expect(loaded.cache.directory == "/tmp/from-file")
        #expect(loaded.cache.memoryBytes == 1024)
        #expect(loaded.fetch.timeoutMilliseconds == 2500)
        #expect(loaded.allow.loopbackSources && loaded.allow.privateSources)
        #expect(loaded.image.maxDimension == 4096)
    }

    @Test func cacheDirectoryFromEnvironment() async throws {
        let loaded = try await ProxyConfiguration.load(filePath: nil, environment: ["IMAGEPROXY_CACHE_DIR": "/var/cache/ipx"])
        #expect(loaded.cache.directory == "/var/cache/ipx")
    }

    @Test func listsComeFromYAMLSequencesOrCommaSeparatedEnvironment() async throws {
        let fromEnvironment = try await ProxyConfiguration.load(
            filePath: nil, environment: ["IMAGEPROXY_CACHE_IGNORED_SOURCE_PARAMS": "token, X-Amz-*"])
        #expect(fromEnvironment.cache.ignoredSourceParameters == ["token", "X-Amz-*"])
        let path = try temporaryFile("cache:\n  ignoredSourceParams:\n    - a\n    - b*\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try await ProxyConfiguration.load(filePath: path, environment: [:]).cache.ignoredSourceParameters == ["a", "b*"])
    }

    /// Each component's own defaults are the service's: the configuration maps onto them without changing
    /// anything when nothing is configured.
    @Test func componentDefaultsAreTheConfigurationDefaults() {
        let defaults = ProxyConfiguration()
        #expect(ImageTransformer.Settings(defaults.image) == ImageTransformer.Settings())
        #expect(EncodingSettings(defaults.image) == EncodingSettings())
        let mapped = OriginFetcher.Settings(defaults), own = OriginFetcher.Settings()
        #expect(mapped.connectTimeoutMilliseconds == own.connectTimeoutMilliseconds)
        #expect(mapped.timeoutMilliseconds == own.timeoutMilliseconds && mapped.maxSourceBytes == own.maxSourceBytes)
        #expect(mapped.maxRedirects == own.maxRedirects && mapped.concurrency == own.concurrency)
        #expect(mapped.userAgent == own.userAgent && mapped.retries == own.retries)
        #expect(mapped.retryBackoffMilliseconds == own.retryBackoffMilliseconds && mapped.proxy == own.proxy)
        #expect(mapped.resolve == own.resolve && mapped.resumeBudgetBytes == own.resumeBudgetBytes)
        #expect(mapped.originHeaders.isEmpty && own.originHeaders.isEmpty)
        #expect(MemoryCache.Settings(defaults.cache) == MemoryCache.Settings())
        #expect(DiskCache.Settings(defaults.cache) == DiskCache.Settings())
        #expect(NegativeCache.Settings(defaults.cache) == NegativeCache.Settings())
        #expect(FreshnessPolicy(defaults.cache) == FreshnessPolicy())
    }

    @Test func listItemsKeepTheirCommas() async throws {
        let header = "*.example.com=Accept: image/webp,image/*;q=0.8"
        let path = try temporaryFile("security:\n  originHeaders:\n    - \"\(header)\"\n    - \"b.example=X-Token: 1,2\"\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try await ProxyConfiguration.load(filePath: path, environment: [:])
        #expect(fromFile.security.originHeaders == [header, "b.example=X-Token: 1,2"])
        // In the environment, a JSON array keeps commas inside items; plain text splits on them.
        let fromJSON = try await ProxyConfiguration.load(
            filePath: nil, environment: ["IMAGEPROXY_SECURITY_ORIGIN_HEADERS": #"["\#(header)", "c.example=A: b"]"#])
        #expect(fromJSON.security.originHeaders == [header, "c.example=A: b"])
        let widths = try await ProxyConfiguration.load(filePath: nil, environment: ["IMAGEPROXY_HTTP_CLIENT_HINT_WIDTHS": "800, 100,400"])
        #expect(widths.http.clientHintWidths == [100, 400, 800])
    }

    @Test func jsonFilesAreAccepted() async throws {
        let path = try temporaryFile(#"{"image": {"maxDimension": 2000}, "cache": {"defaultTtl": 60, "ignoredSourceParams": ["sig", "X-Foo-*"]}}"#, extension: "json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let loaded = try await ProxyConfiguration.load(filePath: path, environment: [:])
        #expect(loaded.image.maxDimension == 2000)
        #expect(loaded.cache.defaultTTL == 60)
        #expect(loaded.cache.ignoredSourceParameters == ["sig", "X-Foo-*"])
    }

    @Test func unknownKeysAndNamesFailNamingThem() async throws {
        let path = try temporaryFile("cache:\n  memoryByte: 12\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        await #expect(throws: ConfigurationError("unknown key 'cache.memoryByte' in \(path)")) {
            try await ProxyConfiguration.load(filePath: path, environment: [:])
        }
        await #expect(throws: ConfigurationError("unknown environment variable IMAGEPROXY_BINDD")) {
            try await ProxyConfiguration.load(filePath: nil, environment: ["IMAGEPROXY_BINDD": "x"])
        }
    }

    @Test func malformedValuesFailNamingTheKey() async throws {
        for (name, value, key) in [
            ("IMAGEPROXY_BIND", "localhost", "bind"), ("IMAGEPROXY_ALLOW_LOOPBACK_SOURCES", "maybe", "allow.loopbackSources"),
            ("IMAGEPROXY_IMAGE_MAX_DIMENSION", "0", "image.maxDimension"), ("IMAGEPROXY_LOG_LEVEL", "loud", "logLevel"),
            ("IMAGEPROXY_ALLOW_ADDRESS_CLASSES", "everything", "allow.addressClasses"),
            ("IMAGEPROXY_SECURITY_ORIGIN_HEADERS", "no-separator", "security.originHeaders"),
            ("IMAGEPROXY_FETCH_RESOLVE", "host-only", "fetch.resolve"),
        ] {
            do {
                _ = try await ProxyConfiguration.load(filePath: nil, environment: [name: value])
                Issue.record("\(name)=\(value) was accepted")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("for \(key) (\(name))"), "\(error)")
            }
        }
        let broken = try temporaryFile("cache: [unclosed\n")
        defer { try? FileManager.default.removeItem(atPath: broken) }
        await #expect(throws: ConfigurationError.self) { try await ProxyConfiguration.load(filePath: broken, environment: [:]) }
        await #expect(throws: ConfigurationError.self) {
            try await ProxyConfiguration.load(filePath: "/nonexistent/imageproxy.yaml", environment: [:])
        }
    }

    /// Values are read by type through swift-configuration from the one parse of the file: YAML's own
    /// integers and booleans, a wrong type named with its key, an invalid environment value not hidden by
    /// the file's valid one, a nested value where a list of strings is expected refused.
    @Test func valuesAreReadByTheirType() async throws {
        let path = try temporaryFile("image:\n  maxDimension: 0x800\n  autoAVIF: yes\nhttp:\n  clientHintWidths: [640, 320]\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let loaded = try await ProxyConfiguration.load(filePath: path, environment: [:])
        #expect(loaded.image.maxDimension == 2048)
        #expect(loaded.image.autoAVIF && !ProxyConfiguration().image.autoAVIF)
        #expect(loaded.http.clientHintWidths == [320, 640])
        await #expect(throws: ConfigurationError(
            "invalid value 'x' for image.maxDimension (IMAGEPROXY_IMAGE_MAX_DIMENSION): expected an integer in 1...65535")
        ) {
            try await ProxyConfiguration.load(filePath: path, environment: ["IMAGEPROXY_IMAGE_MAX_DIMENSION": "x"])
        }
        let wrongType = try temporaryFile("image:\n  maxDimension: big\n")
        defer { try? FileManager.default.removeItem(atPath: wrongType) }
        await #expect(throws: ConfigurationError(
            "invalid value 'big' for image.maxDimension (IMAGEPROXY_IMAGE_MAX_DIMENSION): expected an integer in 1...65535")
        ) {
            try await ProxyConfiguration.load(filePath: wrongType, environment: [:])
        }
        let nested = try temporaryFile("fetch:\n  resolve:\n    - host: a\n")
        defer { try? FileManager.default.removeItem(atPath: nested) }
        await #expect(throws: ConfigurationError(
            "invalid value for fetch.resolve in \(nested): expected a list of host:port:address")
        ) {
            try await ProxyConfiguration.load(filePath: nested, environment: [:])
        }
    }

    @Test func bindAddressParsing() {
        #expect(ListenAddress(parsing: "127.0.0.1:8080") == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(ListenAddress(parsing: "[::1]:80") == ListenAddress(host: "::1", port: 80))
        #expect(ListenAddress(parsing: ":8080") == ListenAddress(host: "0.0.0.0", port: 8080))
        #expect(ListenAddress(parsing: "host") == nil)
        #expect(ListenAddress(parsing: "host:70000") == nil)
    }
}
