import Foundation
import Testing

@testable import ImageCore
@testable import ProxyServer

/// Memory freed below a live block of the heap is resident until trimmed (malloc counts it as free in
/// its heaps); the trim hands it back.
@Suite(.serialized) struct MemoryTrimTests {
    @Test func freedHeapMemoryBelowALiveBlockIsReturned() throws {
        // 3200 blocks of 48 KiB (under any mmap threshold, so they come from the heap), each touched,
        // then all freed but the last, which pins the heap's top so malloc cannot shrink it by itself.
        let blockBytes = 48 * 1024, count = 3200
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0..<count {
            let block = UnsafeMutableRawPointer.allocate(byteCount: blockBytes, alignment: 16)
            block.initializeMemory(as: UInt8.self, repeating: 1, count: blockBytes)
            blocks.append(block)
        }
        let pin = blocks.removeLast()
        defer { pin.deallocate() }
        let held = Vips.mallocStatistics
        for block in blocks { block.deallocate() }
        // malloc's own figures (the `imageproxy_malloc_*` gauges) see the ~150 MB move from live to free.
        let freed = Vips.mallocStatistics
        let blocksBytes = blockBytes * (count - 1)
        #expect(held.inUse - freed.inUse > blocksBytes * 9 / 10, "in use \(held.inUse) -> \(freed.inUse)")
        #expect(freed.freeInHeaps - held.freeInHeaps > blocksBytes * 9 / 10, "free \(held.freeInHeaps) -> \(freed.freeInHeaps)")
        let before = try #require(ProcessStatistics.current()?.residentMemoryBytes)
        #expect(Vips.releaseFreeMemory())
        let after = try #require(ProcessStatistics.current()?.residentMemoryBytes)
        // About 150 MB were freed; most of it must leave the resident set.
        let mebibyte = Double(1 << 20)
        #expect(before - after > 100 * mebibyte, "resident \(before / mebibyte) MiB before the trim, \(after / mebibyte) MiB after")
    }
}
