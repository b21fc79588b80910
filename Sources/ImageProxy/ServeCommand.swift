import ArgumentParser
import Foundation
import ImageCore
import Logging
import Metrics
import Prometheus
import ProxyServer
import ProxyEngine
import ServiceLifecycle

/// `ImageProxy serve`: reads configuration, bootstraps logging, runs the services until SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the HTTP service (the default).")

    @Option(name: .long, help: "Configuration file (YAML or JSON). Default: config/imageproxy.yaml when it exists.")
    var config: String?

    @Option(name: .long, help: "Listen address host:port; overrides bind and IMAGEPROXY_BIND.")
    var bind: String?

    @Flag(name: .long, help: "Validate the configuration, print the effective settings and exit.")
    var checkConfig = false

    func run() async throws {
        var environment = ProcessInfo.processInfo.environment
        if let bind { environment["IMAGEPROXY_BIND"] = bind }
        let settings: ProxyConfiguration
        do {
            settings = try await ProxyConfiguration.load(filePath: config, environment: environment)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(2)
        }
        let accessMode: AccessMode
        do {
            accessMode = try AccessMode.of(settings)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(2)
        }
        if checkConfig {
            for deprecation in settings.deprecations { FileHandle.standardError.write(Data("warning: \(deprecation)\n".utf8)) }
            print(
                "configuration ok: listening on \(settings.bind), cache in \(settings.cache.disk.directory), "
                    + "access: \(accessMode.rawValue) (\(accessMode.summary))")
            return
        }
        // glibc gives every thread its own malloc arena; with libvips' large short-lived buffers on many
        // threads that multiplies resident memory. Two arenas keep RSS bounded (MALLOC_ARENA_MAX wins if set).
        // And a fixed mmap threshold returns image-sized blocks at once (MALLOC_MMAP_THRESHOLD_ wins if set).
        let mallocSettings = ProcessInfo.processInfo.environment
        if mallocSettings["MALLOC_ARENA_MAX"] == nil { Vips.limitMallocArenas(2) }
        if mallocSettings["MALLOC_MMAP_THRESHOLD_"] == nil { Vips.fixMallocMmapThreshold(bytes: 256 * 1024) }
        let level = Logger.Level(rawValue: settings.logLevel) ?? .info
        let format = StructuredLogHandler.Format(rawValue: settings.observability.logFormat) ?? .logfmt
        LoggingSystem.bootstrap { label in StructuredLogHandler(label: label, format: format, level: level) }
        let metrics = ProxyMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let logger = Logger(label: "imageproxy")
        let runtime: ProxyRuntime
        do {
            runtime = try ProxyRuntime(
                configuration: settings, logger: logger, metrics: metrics, accessLogger: Logger(label: "imageproxy.access"))
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(2)
        }
        let application = ProxyApplication.make(runtime: runtime, logger: logger)
        let signals = ShutdownSignalService(readiness: runtime.readiness, settings: settings.shutdown, logger: logger)
        let group = ServiceGroup(services: [signals, application], logger: logger)
        signals.attach(to: group)
        for deprecation in settings.deprecations {
            logger.warning("deprecated setting", metadata: ["detail": "\(deprecation)"])
        }
        logger.info("starting", metadata: ["bind": "\(settings.bind)"])
        defer { LogLineWriter.standardError.flush() }  // the last lines reach stderr before the process ends
        try await group.run()
        logger.info("stopped")
    }
}
