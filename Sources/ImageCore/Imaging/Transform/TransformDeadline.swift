import CVipsShim
import Dispatch
import Foundation

/// Bounds the time of one transform: when it passes, every image registered so far gets libvips' kill
/// flag, so the evaluation under way (decode, resize, encode) stops at its next tile.
final class TransformDeadline: @unchecked Sendable {
    // VipsImage is not Sendable: the fields are only touched under `lock`, and vips_image_set_kill is
    // safe to call from any thread.
    private let lock = NSLock()
    private var images: [VipsImage] = []
    private var expired = false
    private var finished = false
    /// When the deadline passes, in CLOCK_MONOTONIC nanoseconds (0: no limit), for C code that checks
    /// the clock itself (the JPEG 1/8 decoder).
    let monotonicNanoseconds: Int64

    /// Starts the clock; `limitMilliseconds` ≤ 0 means no limit.
    init(limitMilliseconds: Int) {
        guard limitMilliseconds > 0 else {
            monotonicNanoseconds = 0
            return
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        monotonicNanoseconds = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) + Int64(limitMilliseconds) * 1_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(limitMilliseconds)) { [weak self] in
            self?.expire()
        }
    }

    /// Adds an image whose evaluation the deadline may stop.
    func watch(_ image: VipsImage) {
        lock.lock()
        defer { lock.unlock() }
        if expired {
            vips_image_set_kill(image.pointer, 1)
        } else if !finished {
            images.append(image)
        }
    }

    /// Marks the deadline as passed (code that checks the clock itself found it so).
    func expireNow() { expire() }

    /// Whether the deadline passed before ``finish()``.
    var hasExpired: Bool {
        lock.lock()
        defer { lock.unlock() }
        return expired
    }

    /// The transform is over: nothing more is killed; registered images are released.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        finished = true
        images.removeAll()
    }

    private func expire() {
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return }
        expired = true
        for image in images { vips_image_set_kill(image.pointer, 1) }
    }
}
