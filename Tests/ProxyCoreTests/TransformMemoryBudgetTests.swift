import Foundation
import HTTPTypes
import Testing

@testable import ImageCore
@testable import ProxyCore
@testable import ProxyEngine

/// `image.maxTransformBytes`: transforms reserve their estimated working set before decoding.
@Suite(.timeLimit(.minutes(1))) struct TransformMemoryBudgetTests {
    @Test func reservationsWaitForMemoryAndRefuseWhatCanNeverFit() throws {
        let budget = TransformMemoryBudget(capacity: 100)
        let first = try budget.reserve(70, wait: .milliseconds(10))
        #expect(budget.reservedBytes == 70)
        #expect(throws: ImagingError.memoryBudgetBusy) { try budget.reserve(40, wait: .milliseconds(50)) }
        #expect(throws: ImagingError.needsTooMuchMemory(limit: 100)) { try budget.reserve(101, wait: .seconds(1)) }
        // Released by another thread while this one waits: the wait ends with the reservation.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { budget.release(first) }
        let second = try budget.reserve(40, wait: .seconds(5))
        #expect(budget.reservedBytes == 40)
        budget.release(second)
        #expect(budget.reservedBytes == 0)
        #expect(try TransformMemoryBudget(capacity: 0).reserve(1 << 40, wait: .zero) == 0, "0: no budget")
    }

    @Test func theEstimateFollowsShrinkOnLoad() throws {
        let header = try SourceHeader(reading: TestImages.jpeg(width: 4000, height: 3000))
        let small = ResizeStep(width: 200, height: nil, fit: .contain).estimatedWorkingSetBytes(for: header, isJPEG: true)
        let large = ResizeStep(width: 3000, height: nil, fit: .contain).estimatedWorkingSetBytes(for: header, isJPEG: true)
        #expect(small < 4 * 4000 * 3000 / 16, "a 200 px thumbnail decodes at 1/8: \(small)")
        #expect(large >= 2 * 4 * 4000 * 3000, "a 3000 px one decodes whole: \(large)")
        var enlarged = ResizeStep(width: 4096, height: nil, fit: .contain)
        enlarged.enlarge = true
        #expect(enlarged.estimatedWorkingSetBytes(for: header, isJPEG: true) < 200_000_000, "one side given: the other from the aspect")
    }

    @Test func aSourceNeedingMoreThanTheBudgetIs422() async throws {
        let big = try TestImages.gradient(width: 1600, height: 1200).encoded(as: .png).bytes
        let small = try TestImages.gradient(width: 200, height: 150).encoded(as: .png).bytes
        let files: [String: FixtureOrigin.File] = ["/big.png": .image(big), "/small.png": .image(small)]
        try await withFixtures(files, configure: { $0.image.transformer.maxTransformBytes = 4 << 20 }) { proxy, base, _ in
            let refused = try await proxy.image([("url", base + "/big.png"), ("w", "100")])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("image.maxTransformBytes"), "\(refused.text)")
            let served = try await proxy.image([("url", base + "/small.png"), ("w", "100")])
            #expect(served.status == .ok)
        }
    }
}
