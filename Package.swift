// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "ImageProxy",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ImageProxy", targets: ["ImageProxy"]),
        .library(name: "ProxyServer", targets: ["ProxyServer"]),
        .library(name: "ProxyEngine", targets: ["ProxyEngine"]),
        .library(name: "ImageCore", targets: ["ImageCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["YAML"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // Traces: the API (spans, context, W3C propagation through a `Tracer`) and, in the server only, the
        // OTLP/HTTP exporter with its batch processor and samplers (swift-otel; the gRPC trait left out).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // libxml2 parses SVG sources for the check of what they refer to (svg/svg_check.c); librsvg uses it too.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .target(
            name: "CVipsShim", dependencies: ["CVips", "CLibXML2"],
            // Frame counts and WebP metadata removal from the containers (frame_count.c): libwebpdemux
            // and libwebpmux come with libwebp-dev (a libvips-dev dependency), giflib with libgif-dev.
            // lcms2 (a libvips-dev dependency) tells sRGB profiles from others (icc_profile.c). libjpeg
            // (libjpeg62-turbo-dev, a libvips-dev dependency) decodes JPEG on the calling thread (jpeg_scaled.c)
            // and, with libexif (libexif-dev, a libvips-dev dependency), reads JPEG headers (jpeg_header.c).
            // libdeflate (libdeflate-dev, a libtiff-dev dependency) inflates the common PNG (png_decode.c).
            // No a*b+c contracted into a fused multiply-add: aarch64 compilers contract by default, and the
            // reduce's bytes would differ from x86-64's in the last bit (Sources/CVipsShim/platform/platform.h).
            cSettings: [.unsafeFlags(["-ffp-contract=off"])],
            linkerSettings: [
                .linkedLibrary("webpdemux"), .linkedLibrary("webpmux"), .linkedLibrary("webp"), .linkedLibrary("gif"),
                .linkedLibrary("lcms2"), .linkedLibrary("jpeg"), .linkedLibrary("exif"), .linkedLibrary("deflate"),
            ]
        ),
        // Face detection (OpenCV's objdetect with the Haar cascades of Debian's opencv-data) behind a C interface:
        // libopencv-objdetect-dev brings objdetect, imgproc and core; Debian ships no opencv4.pc without the
        // whole libopencv-dev, so the headers' folder is named here.
        .target(
            name: "CFaceShim",
            cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
            linkerSettings: [.linkedLibrary("opencv_objdetect"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_core")]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // Imaging: request options, variant keys, the imaging steps over libvips and the JPEG DC decoder.
        // Knows nothing of HTTP, caches, configuration files or the network.
        .target(
            name: "ImageCore",
            dependencies: [
                "CVipsShim",
                "CFaceShim",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Engine: fetching (libcurl), queues, memory and disk caches, the pipeline, metrics objects.
        // Knows no web framework and no configuration file.
        .target(
            name: "ProxyEngine",
            dependencies: [
                "ImageCore",
                "CCurlShim",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Server: Hummingbird/NIO HTTP (with the memory-hit front), configuration loading, services,
        // observability wiring, the URL dialects. The module says what it is (the server); its folder is the
        // service's core, as the design card names it.
        .target(
            name: "ProxyServer",
            dependencies: [
                "ProxyEngine",
                "ImageCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            path: "Sources/ProxyCore",
            // api/openapi.json, the one source of the OpenAPI document, becomes `OpenAPIDocument.json`.
            plugins: ["EmbedOpenAPIDocument"]
        ),
        .executableTarget(name: "EmbedText"),
        .plugin(name: "EmbedOpenAPIDocument", capability: .buildTool(), dependencies: ["EmbedText"]),
        .executableTarget(
            name: "ImageProxy",
            dependencies: [
                "ProxyServer",
                "ProxyEngine",
                "ImageCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What every test target shares: the test images, the one test JPEG encoder, the one origin harness.
        .target(
            name: "TestSupport",
            dependencies: [
                "ImageCore",
                "CVipsShim",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/TestSupport"
        ),
        // Each layer's own unit tests need no server.
        .testTarget(name: "ImageCoreTests", dependencies: ["ImageCore", "CVipsShim", "TestSupport"]),
        .testTarget(
            name: "ProxyEngineTests",
            dependencies: [
                "ProxyEngine", "ImageCore", "CVipsShim", "CCurlShim", "TestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"), .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "ProxyServerTests",
            dependencies: [
                "ProxyServer",
                "ProxyEngine",
                "ImageCore",
                "CVipsShim",
                "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            exclude: ["Scripts"]
        ),
    ]
)
