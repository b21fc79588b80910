import Testing
import TestSupport
@testable import ImageCore
@testable import ProxyEngine

@Suite struct TmpMeasure {
    @Test(arguments: [(3840, 2160, "1920", false), (3840, 2160, "2048", false), (3840, 2160, "3840", false), (2560, 1600, "1200", false), (2560, 1600, "2560", false), (3840, 2160, "1920", true), (3840, 2160, "3840", true), (3840, 2160, "1200", false), (3840, 2160, "700x700", false)])
    func measure(width: Int, height: Int, box: String, progressive: Bool) async throws {
        let source = try TestImages.jpeg(TestImages.noise(width: width, height: height, bands: 3), quality: 85, progressive: progressive, subsample: true)
        let parts = box.split(separator: "x").map(String.init)
        var query = [("url", "http://example.com/a.jpg"), ("w", parts[0])]
        if parts.count > 1 { query += [("h", parts[1]), ("fit", "cover")] }
        let request = try ImageRequest(query: query, limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
        var growths: [Int] = []
        var reserved = 0
        for _ in 0..<4 {
            let (_, growth, r) = try await TransformMemoryBudgetTests.measured(source, request, .fixed(.jpeg), transformer)
            growths.append(growth >> 20); reserved = r >> 20
        }
        print("MEASURE \(width)x\(height) p\(progressive) -> \(box): growth MiB \(growths) reserved \(reserved)")
    }
}
