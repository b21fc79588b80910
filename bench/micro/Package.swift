// swift-tools-version: 6.1
// Micro-benchmarks of ProxyCore's hot paths (ordo-one/benchmark), kept out of the main package so that
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
            name: "ProxyCoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ProxyCore", package: "ImageProxy"),
            ],
            path: "Benchmarks/ProxyCoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
