import Foundation
import Testing

@testable import ImageCore
@testable import ProxyCore

/// Memory freed below a live block of the heap is resident until trimmed; the trim hands it back.
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
        for block in blocks { block.deallocate() }
        let before = try #require(ProcessStatistics.current()?.residentMemoryBytes)
        #expect(Vips.releaseFreeMemory())
        let after = try #require(ProcessStatistics.current()?.residentMemoryBytes)
        // About 150 MB were freed; most of it must leave the resident set.
        let mebibyte = Double(1 << 20)
        #expect(before - after > 100 * mebibyte, "resident \(before / mebibyte) MiB before the trim, \(after / mebibyte) MiB after")
    }
}
