import Foundation
@testable import ProxyServer
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
        #expect(loaded.cache.disk.directory == "/tmp/from-file")
        #expect(loaded.cache.memory.capacityBytes == 1024)
        #expect(loaded.fetch.timeoutMilliseconds == 2500)
        #expect(loaded.fetch.policy.allowLoopback && loaded.fetch.policy.allowPrivate)
        #expect(loaded.image.maxDimension == 4096)
    }

    @Test func cacheDirectoryFromEnvironment() async throws {
        let loaded = try await ProxyConfiguration.load(filePath: nil, environment: ["IMAGEPROXY_CACHE_DIR": "/var/cache/ipx"])
        #expect(loaded.cache.disk.directory == "/var/cache/ipx")
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
    /// The configuration holds the components' own `Settings`: each key of a component lands in the
    /// field the component reads, with no mapping in between.
    @Test func componentKeysSetTheComponentsSettings() async throws {
        let yaml = """
            allow: {loopbackSources: true, addressClasses: [sharedCGNAT, linkLocal]}
            security: {allowedHosts: ["*.Example.com"], originHeaders: ["a.example=X-Key: 1,2"]}
            fetch: {connectTimeoutMs: 1001, timeoutMs: 2002, maxSourceBytes: 3003, concurrency: 4, resumeBytes: 5005,
                    maxRedirects: 6, retries: 7, retryBackoffMs: 808, resolve: ["a.example:80:127.0.0.1"],
                    proxy: "http://127.0.0.1:3128", userAgent: "test-agent"}
            image: {maxSourcePixels: 1000, maxFrames: 9, maxSourceFrames: 99, maxTransformMs: 1234, maxTransformBytes: 4321,
                    jpegQuality: 71, webpQuality: 72, avifQuality: 73, avifEffort: 4, pngCompression: 3}
            cache: {dir: /tmp/ipx-keys, memoryBytes: 111, diskBytes: 222, staleRetention: 333, negativeTtl: 44,
                    errorTtl: 3, defaultTtl: 600, minTtl: 120, maxTtl: 100}
            """
        let path = try temporaryFile(yaml)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let loaded = try await ProxyConfiguration.load(filePath: path, environment: [:])

        var fetch = OriginFetcher.Settings()
        fetch.policy = AddressPolicy(allowLoopback: true, allowPrivate: false, extraClasses: [.sharedCGNAT, .linkLocal])
        fetch.allowlist = HostAllowlist(patterns: ["*.example.com"])
        fetch.originHeaders = [OriginHeader(parsing: "a.example=X-Key: 1,2")!]
        (fetch.connectTimeoutMilliseconds, fetch.timeoutMilliseconds, fetch.maxSourceBytes) = (1001, 2002, 3003)
        (fetch.concurrency, fetch.resumeBudgetBytes, fetch.maxRedirects, fetch.retries) = (4, 5005, 6, 7)
        (fetch.retryBackoffMilliseconds, fetch.resolve) = (808, ["a.example:80:127.0.0.1"])
        (fetch.proxy, fetch.userAgent) = ("http://127.0.0.1:3128", "test-agent")
        #expect(loaded.fetch == fetch)
        #expect(loaded.fetch.allowlist.allows("cdn.example.com") && !loaded.fetch.allowlist.allows("example.org"))

        var transformer = ImageTransformer.Settings()
        (transformer.maxSourcePixels, transformer.maxFrames, transformer.maxSourceFrames) = (1000, 9, 99)
        (transformer.maxTransformMilliseconds, transformer.maxTransformBytes) = (1234, 4321)
        (transformer.encoding.jpegQuality, transformer.encoding.webpQuality, transformer.encoding.avifQuality) = (71, 72, 73)
        (transformer.encoding.avifEffort, transformer.encoding.pngCompression) = (4, 3)
        #expect(loaded.image.transformer == transformer)

        var disk = DiskCache.Settings()
        (disk.directory, disk.capacityBytes, disk.staleRetentionSeconds) = ("/tmp/ipx-keys", 222, 333)
        #expect(loaded.cache.disk == disk)
        #expect(loaded.cache.memory.capacityBytes == 111)
        var negative = NegativeCache.Settings()
        (negative.negativeTTL, negative.errorTTL) = (44, 3)
        #expect(loaded.cache.negative == negative)
        var freshness = FreshnessPolicy()
        (freshness.defaultTTL, freshness.minTTL, freshness.maxTTL) = (600, 120, 100)
        #expect(loaded.cache.freshness == freshness)
        // A maxTtl below minTtl is raised to it where lifetimes are given.
        #expect(loaded.cache.freshness.verdict(cacheControl: "max-age=99999", expires: nil, date: nil).lifetime == 120)

        // The status page shows the component values as they were given.
        let shown = Dictionary(uniqueKeysWithValues: ProxyConfiguration.settings.map { ($0.key, $0.read(loaded)) })
        #expect(shown["allow.addressClasses"] == "linkLocal, sharedCGNAT")
        #expect(shown["security.allowedHosts"] == "*.example.com")
        #expect(shown["security.originHeaders"] == "a.example=X-Key: 1,2")
        #expect(shown["fetch.resumeBytes"] == "5005" && shown["cache.staleRetention"] == "333")
        #expect(shown["image.avifEffort"] == "4")
    }

    @Test func listItemsKeepTheirCommas() async throws {
        let header = "*.example.com=Accept: image/webp,image/*;q=0.8"
        let path = try temporaryFile("security:\n  originHeaders:\n    - \"\(header)\"\n    - \"b.example=X-Token: 1,2\"\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try await ProxyConfiguration.load(filePath: path, environment: [:])
        #expect(fromFile.fetch.originHeaders.map(\.description) == [header, "b.example=X-Token: 1,2"])
        // In the environment, a JSON array keeps commas inside items; plain text splits on them.
        let fromJSON = try await ProxyConfiguration.load(
            filePath: nil, environment: ["IMAGEPROXY_SECURITY_ORIGIN_HEADERS": #"["\#(header)", "c.example=A: b"]"#])
        #expect(fromJSON.fetch.originHeaders.map(\.description) == [header, "c.example=A: b"])
        let widths = try await ProxyConfiguration.load(filePath: nil, environment: ["IMAGEPROXY_HTTP_CLIENT_HINT_WIDTHS": "800, 100,400"])
        #expect(widths.http.clientHintWidths == [100, 400, 800])
    }

    @Test func jsonFilesAreAccepted() async throws {
        let path = try temporaryFile(#"{"image": {"maxDimension": 2000}, "cache": {"defaultTtl": 60, "ignoredSourceParams": ["sig", "X-Foo-*"]}}"#, extension: "json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let loaded = try await ProxyConfiguration.load(filePath: path, environment: [:])
        #expect(loaded.image.maxDimension == 2000)
        #expect(loaded.cache.freshness.defaultTTL == 60)
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

/// Environment names users guess (issue #58): the key in upper snake case with an acronym as one word, the
/// former spelling still read with a warning, and the table of every key generated from the settings.
@Suite struct EnvironmentNameTests {
    @Test func acronymsAreWordsAndTheFormerSpellingStillWorks() async throws {
        let setting = try #require(ProxyConfiguration.settings.first { $0.key == "image.allowJXLInput" })
        #expect(setting.environmentName == "IMAGEPROXY_IMAGE_ALLOW_JXL_INPUT")
        #expect(setting.deprecatedEnvironmentName == "IMAGEPROXY_IMAGE_ALLOW_JXLINPUT")
        #expect(ConfigurationSetting.environmentWords(forKey: "image.autoAVIF") == "IMAGE_AUTO_AVIF")
        #expect(ConfigurationSetting.environmentWords(forKey: "cache.memoryBytes") == "CACHE_MEMORY_BYTES")
        #expect(ConfigurationSetting.environmentWords(forKey: "a.parseHTTPHeader2Now") == "A_PARSE_HTTP_HEADER2_NOW")

        let current = try await ProxyConfiguration.load(filePath: nil, environment: ["IMAGEPROXY_IMAGE_ALLOW_JXL_INPUT": "true"])
        #expect(current.image.transformer.allowJXLInput && current.deprecations.isEmpty)
        let former = try await ProxyConfiguration.load(filePath: nil, environment: ["IMAGEPROXY_IMAGE_ALLOW_JXLINPUT": "true"])
        #expect(former.image.transformer.allowJXLInput)
        #expect(former.deprecations == ["IMAGEPROXY_IMAGE_ALLOW_JXLINPUT is deprecated: name it IMAGEPROXY_IMAGE_ALLOW_JXL_INPUT"])
        await #expect(throws: ConfigurationError.self) {
            try await ProxyConfiguration.load(
                filePath: nil, environment: ["IMAGEPROXY_IMAGE_ALLOW_JXLINPUT": "true", "IMAGEPROXY_IMAGE_ALLOW_JXL_INPUT": "false"])
        }
    }

    @Test func everyKeyIsReadUnderItsEnvironmentName() async throws {
        // Each setting given its own default under its environment name: read, and no name is unknown.
        let defaults = ProxyConfiguration()
        for setting in ProxyConfiguration.settings where !setting.isSecret && !setting.read(defaults).isEmpty {
            let environment = [setting.environmentName: setting.read(defaults)]
            let loaded = try await ProxyConfiguration.load(filePath: nil, environment: environment)
            #expect(setting.read(loaded) == setting.read(defaults), "\(setting.environmentName)")
        }
        let names = ProxyConfiguration.settings.map(\.environmentName)
        #expect(Set(names).count == names.count, "one variable per key")
    }

    @Test func theCommittedTableIsTheSettings() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let committed = try String(contentsOf: root.appendingPathComponent("config/SETTINGS.md"), encoding: .utf8)
        #expect(committed == ProxyConfiguration.settingsTable(), "config/SETTINGS.md is `ImageProxy settings` (regenerate it)")
        for setting in ProxyConfiguration.settings {
            #expect(committed.contains("| `\(setting.key)` | `\(setting.environmentName)`"), "\(setting.key)")
        }
    }
}
