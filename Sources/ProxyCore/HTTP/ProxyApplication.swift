import Hummingbird
import Logging

/// Builds the HTTP application (Hummingbird on SwiftNIO) around a ``ProxyRuntime``.
public enum ProxyApplication {
    /// The router with every route and the error middleware.
    public static func makeRouter(runtime: ProxyRuntime) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: PublicErrorMiddleware())
        let images = ImageHandler(
            pipeline: runtime.pipeline,
            limits: .init(maxDimension: runtime.configuration.image.maxDimension),
            staleWhileRevalidate: runtime.configuration.http.staleWhileRevalidate)
        let admin = CacheAdminHandler(runtime: runtime)
        let health = HealthHandler(pool: runtime.transformPool, readiness: runtime.readiness)
        router.get("/img", use: images.handle)
        router.head("/img", use: images.handle)
        router.get("/health", use: health.health)
        router.get("/ready", use: health.ready)
        router.delete("/cache", use: admin.purge)
        router.get("/cache/stats", use: admin.stats)
        return router
    }

    /// The application: server on the configured address, with the runtime and the cache janitor as
    /// services, so that they stop after the server drains.
    public static func make(runtime: ProxyRuntime, logger: Logger) -> some ApplicationProtocol {
        let bind = runtime.configuration.bind
        return Application(
            router: makeRouter(runtime: runtime),
            configuration: .init(address: .hostname(bind.host, port: bind.port), serverName: "ImageProxy"),
            services: [
                runtime,
                CacheJanitorService(
                    disk: runtime.diskCache, intervalSeconds: runtime.configuration.cache.janitorInterval, logger: logger),
            ],
            logger: logger)
    }
}
