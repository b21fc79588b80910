import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

/// #19's crash in liborc (a reducev on a transform thread): liborc up to 0.4.33 races between compiling
/// a program and freeing one on another thread. libvips' compiles and frees go through the process's
/// own definitions, which hold one lock around liborc's (`orc_serialized.c`). The race itself, and its
/// absence with the lock, is shown by `scripts/check-orc-race.sh` (a process of its own: without the lock
/// it crashes).
@Suite struct OrcSerializedTests {
    @Test func libvipsCompilesAndFreesItsReducesThroughTheLock() throws {
        let before = ipx_orc_serialized_calls()
        let image = try TestImages.noise(width: 600, height: 400, bands: 3)
        // libvips' own reduce down (the service's own reduce of a decode in memory compiles nothing).
        let reduced = try image.producingForTests { ipx_vips_reducev_lanczos3($0, $1, 2.5) }
        #expect(reduced.width == 600 && reduced.height == 160)
        #expect(ipx_orc_serialized_calls() > before, "libvips' vectorised reduce compiled its orc program through the lock")
    }

    /// Reduces built and freed on four threads at once, many times: the interleaving that crashed.
    @Test func reducesOnManyThreadsAtOnceComeOutRight() async throws {
        let image = try TestImages.noise(width: 300, height: 200, bands: 3)
        let expected = try image.producingForTests { ipx_vips_reducev_lanczos3($0, $1, 2.5) }.pixels()
        let bytes = try image.pixels()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let source = try ImageCore.VipsImage.fromPixels(bytes, width: 300, height: 200, bands: 3)
                    for _ in 0..<50 {
                        let pixels = try source.producingForTests { ipx_vips_reducev_lanczos3($0, $1, 2.5) }.pixels()
                        guard pixels == expected else { return false }
                    }
                    return true
                }
            }
            for try await same in group { #expect(same, "every reduce the same pixels") }
        }
    }
}
