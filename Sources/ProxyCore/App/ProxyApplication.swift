import Hummingbird
import HummingbirdCore
import ImageCore
import Logging
import NIOCore
import ProxyEngine
import ServiceLifecycle

/// Builds the HTTP application (Hummingbird on SwiftNIO) around a ``ProxyRuntime``.
public enum ProxyApplication {
    /// The `Server` header of every response.
    static let serverName = "ImageProxy"

    /// The router with every route, the observability and the error middleware.
    public static func makeRouter(runtime: ProxyRuntime) -> Router<ProxyRequestContext> {
        let router = Router(context: ProxyRequestContext.self)
        let configuration = runtime.configuration
        let images = imageHandler(runtime)
        router.add(middleware: observability(runtime))
        router.add(middleware: CORSMiddleware(policy: images.cors))
        router.add(middleware: PublicErrorMiddleware())
        if let dialects = dialectMiddleware(runtime, images: images) { router.add(middleware: dialects) }
        let admin = CacheAdminHandler(runtime: runtime)
        let prefetch = PrefetchHandler(
            pipeline: runtime.pipeline, intake: images.intake, guards: images.guards,
            deadlineMilliseconds: images.deadlineMilliseconds)
        let health = HealthHandler(pool: runtime.transformPool, readiness: runtime.readiness)
        let status = StatusPage(runtime: runtime)
        let metrics = MetricsHandler(runtime: runtime)
        let handlers: [String: @Sendable (Request, ProxyRequestContext) async throws -> Response] = [
            "/img": images.handle, "/info": images.info, "/prefetch": prefetch.handle, "/health": health.health,
            "/ready": health.ready, "/metrics": metrics.handle, "/": status.handle, "/status": status.handle,
            "/status/live": status.live, "/cache": admin.purge, "/cache/stats": admin.stats,
            // Browsers ask every page's origin for an icon: answered, so it is neither a 404 nor an error.
            "/favicon.ico": { _, _ in Response(status: .noContent, headers: [.cacheControl: "public, max-age=86400"]) },
            "/openapi.json": { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=3600"],
                    body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
            },
        ]
        let routes = RouteTable.served(metricsOnMainAddress: configuration.observability.metricsBind.isEmpty)
        for route in routes {
            // Every route of the table has its handler (OpenAPIDocumentTests asks each one).
            guard let handler = handlers[route.path] else { continue }
            for method in route.methods { router.on(RouterPath(route.path), method: method, use: handler) }
        }
        router.answerOtherMethods(of: routes.map { ($0.path, $0.methods) })
        return router
    }

    /// The URL dialects that are on (`compat.*`), nil when none is. The configuration was checked at load.
    static func dialectMiddleware(_ runtime: ProxyRuntime, images: ImageHandler) -> DialectMiddleware? {
        let compat = runtime.configuration.compat
        let imgproxy = compat.imgproxy.enabled ? try? ImgproxyFront(settings: compat.imgproxy) : nil
        let thumbor = compat.thumbor.enabled ? ThumborFront(settings: compat.thumbor) : nil
        guard imgproxy != nil || thumbor != nil else { return nil }
        return DialectMiddleware(images: images, imgproxy: imgproxy, thumbor: thumbor)
    }

    static func observability(_ runtime: ProxyRuntime) -> ObservabilityMiddleware {
        let compat = runtime.configuration.compat
        return ObservabilityMiddleware(
            metrics: runtime.metrics, requestLog: runtime.requestLog, statusHistory: runtime.statusHistory,
            accessLog: runtime.accessLog,
            timingAllowOrigin: runtime.configuration.http.timingAllowOrigin,
            logSourceURLs: runtime.configuration.observability.logSourceURLs,
            tracing: runtime.tracing,
            dialectPrefixes: (
                compat.imgproxy.enabled ? DialectPrefix(compat.imgproxy.prefix) : nil,
                compat.thumbor.enabled ? DialectPrefix(compat.thumbor.prefix) : nil
            ))
    }

    static func imageHandler(_ runtime: ProxyRuntime) -> ImageHandler {
        let configuration = runtime.configuration
        let intake = ImageIntake(
            limits: .init(
                maxDimension: configuration.image.maxDimension, presets: configuration.presets, overlays: configuration.overlays,
                defaultColour: configuration.image.colour),
            http: configuration.http)
        return ImageHandler(
            pipeline: runtime.pipeline, intake: intake,
            staleWhileRevalidate: configuration.http.staleWhileRevalidate,
            guards: SourceGuard(
                signer: URLSigner(keys: configuration.security.signingKeys), listen: configuration.bind,
                listeningPort: runtime.listeningPort,
                presetsOnly: configuration.presets.presetsOnly),
            deadlineMilliseconds: configuration.queue.requestTimeoutMilliseconds,
            cors: CORSPolicy(origins: configuration.http.corsOrigins))
    }

    /// The application: server on the configured address, with the runtime, the cache janitor, the status
    /// sampler, the memory trim and (when `metrics.bind` is set) the metrics server as services, so that they stop after it drains.
    public static func make(runtime: ProxyRuntime, logger: Logger) -> some ApplicationProtocol {
        let bind = runtime.configuration.bind
        var services: [any Service] = [
            runtime,
            CacheJanitorService(
                disk: runtime.diskCache, intervalSeconds: runtime.configuration.cache.janitorInterval, logger: logger),
            StatusSamplerService(runtime: runtime),
            MemoryTrimService(),
        ]
        if let tier = runtime.sharedTier { services.append(SharedTierPurgeService(runtime: runtime, tier: tier, logger: logger)) }
        if let tracing = runtime.tracing { services.append(tracing.service) }
        if let metricsBind = ListenAddress(parsing: runtime.configuration.observability.metricsBind) {
            services.append(makeMetricsServer(runtime: runtime, bind: metricsBind, logger: logger))
        }
        let limits = runtime.configuration.server
        let memoryHits = MemoryHitResponder(
            images: imageHandler(runtime), observability: observability(runtime), serverName: serverName,
            answered: runtime.frontAnswers)
        return Application(
            router: makeRouter(runtime: runtime),
            server: HTTPServerBuilder { responder in
                ProxyHTTP1Channel(responder: responder, memoryHits: memoryHits, limits: limits)
            },
            configuration: .init(
                address: .hostname(bind.host, port: bind.port), serverName: serverName,
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections, logger: logger)),
            services: services,
            onServerRunning: { channel in
                runtime.listeningPort.store(channel.localAddress?.port ?? bind.port)
            },
            logger: logger)
    }

    /// A second server answering only `GET /metrics`, for `metrics.bind`.
    static func makeMetricsServer(runtime: ProxyRuntime, bind: ListenAddress, logger: Logger) -> some Service {
        let router = Router()
        router.get("/metrics", use: MetricsHandler(runtime: runtime).handle)
        return Application(
            router: router,
            configuration: .init(address: .hostname(bind.host, port: bind.port), serverName: "ImageProxy-metrics"),
            logger: logger)
    }
}
