// swift-tools-version: 6.1
// Micro-benchmarks of ProxyServer's hot paths (ordo-one/benchmark), kept out of the main package so that
// its build and CI stay free of the benchmark tooling. Run: bash bench/micro/run.sh
import PackageDescription

let package = Package(
    name: "ImageProxyMicroBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "ImageProxy", path: "../.."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "ProxyServerBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ProxyServer", package: "ImageProxy"),
            ],
            path: "Benchmarks/ProxyServerBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
