import Foundation
import Synchronization
import Testing

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// The buffered log writer: lines reach the descriptor in order, off the caller's thread; a full
/// buffer drops (and counts) lines instead of blocking.
@Suite(.timeLimit(.minutes(1))) struct LogLineWriterTests {
    @Test func linesArriveInOrderAndAFullBufferDropsInsteadOfBlocking() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        let writer = LogLineWriter(descriptor: descriptors[1], capacityBytes: 64 * 1024)
        for index in 0..<100 { #expect(writer.write("line \(index)")) }
        writer.flush()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = read(descriptors[0], &buffer, buffer.count)
        let lines = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 100 && lines.first == "line 0" && lines.last == "line 99")

        // Nobody reads the pipe any more: once the pipe (64 KiB) and the buffer fill up, writes return
        // at once, dropped and counted.
        let started = ContinuousClock.now
        let long = String(repeating: "x", count: 1000)
        var dropped = 0
        for _ in 0..<1000 where !writer.write(long) { dropped += 1 }
        #expect(ContinuousClock.now - started < .seconds(2), "writing never blocks")
        #expect(dropped > 0 && writer.droppedLines == dropped)
    }

    @Test func aLoneLineArrivesWithinTheBatchIntervalWithoutAFlush() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        #expect(fcntl(descriptors[0], F_SETFL, O_NONBLOCK) == 0)
        let writer = LogLineWriter(descriptor: descriptors[1])
        usleep(50_000)  // the writer thread is waiting
        let started = ContinuousClock.now
        #expect(writer.write("one line"))
        var buffer = [UInt8](repeating: 0, count: 256)
        var count = -1
        while count <= 0, ContinuousClock.now - started < .seconds(2) {
            count = read(descriptors[0], &buffer, buffer.count)
            if count <= 0 { usleep(1_000) }
        }
        #expect(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) == "one line\n")
        #expect(ContinuousClock.now - started < .milliseconds(500), "batched, not held back")
    }

    @Test func linesOfManyThreadsAllArriveEachThreadsInOrder() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let writer = LogLineWriter(descriptor: descriptors[1])
        // Read while they write: the pipe holds only 64 KiB.
        let collected = Mutex<[UInt8]>([])
        let readEnd = descriptors[0]
        let readerDone = DispatchSemaphore(value: 0)
        let reader = Thread {
            defer { readerDone.signal() }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { return }
                collected.withLock { $0.append(contentsOf: buffer[0..<count]) }
            }
        }
        reader.start()
        let threads = 4, lines = 2_000
        let done = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            Thread.detachNewThread {
                for line in 0..<lines { writer.write("t\(thread) \(line)") }
                done.signal()
            }
        }
        for _ in 0..<threads { #expect(done.wait(timeout: .now() + 20) == .success) }
        writer.flush()
        let deadline = ContinuousClock.now + .seconds(5)
        var text = ""
        repeat {
            usleep(10_000)
            text = String(decoding: collected.withLock { $0 }, as: UTF8.self)
        } while text.split(separator: "\n").count < threads * lines && ContinuousClock.now < deadline
        var next = [Int](repeating: 0, count: threads)
        for line in text.split(separator: "\n") {
            let parts = line.dropFirst().split(separator: " ")
            let (thread, number) = (Int(parts[0])!, Int(parts[1])!)
            #expect(number == next[thread], "thread \(thread)'s lines in order")
            next[thread] = number + 1
        }
        #expect(next == [Int](repeating: lines, count: threads), "every line of every thread")
        #expect(writer.droppedLines == 0)
        // The write end closed (this writer has nothing more to write), the reader sees the end and
        // stops before its descriptor is closed.
        close(descriptors[1])
        #expect(readerDone.wait(timeout: .now() + 5) == .success)
        close(readEnd)
    }

    @Test func timestampsAreRight() {
        #expect(LogTimestamp.bytes(forSecond: 0) == Array("1970-01-01T00:00:00Z".utf8))
        #expect(LogTimestamp.bytes(forSecond: 1_795_000_000) == Array("2026-11-18T11:06:40Z".utf8))
        #expect(LogTimestamp.bytes(forSecond: 951_825_599) == Array("2000-02-29T11:59:59Z".utf8))
    }
}
