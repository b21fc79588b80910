import Foundation
import ImageCore
import Synchronization

/// Variants whose transform failed for a limit, remembered for a while under their variant key, so that
/// a replay of the same expensive or hostile URL costs a lookup instead of the work again (issue #56): the
/// transform deadline (`image.maxTransformMs`), and the failures that the same bytes and options always
/// meet (too many pixels, frames or scans, undecodable, a crop outside). Not remembered: transient ones (the
/// memory budget busy, libvips failing), and those the plan decides from the header at no cost that depend
/// on whether the format was asked for or negotiated, which one variant key covers both (an output too
/// large: a 422 asked for, WebP negotiated; a CPU estimate over the limit). Bounded: when full,
/// the entry closest to expiry gives way. Purges of the source (or of everything) forget its entries.
public final class TransformFailureCache: Sendable {
    private struct Remembered {
        var error: ImagingError
        var sourceKey: String
        var expiresAt: Double
    }

    private let entries = Mutex<[String: Remembered]>([:])
    private let lifetime: Double
    private let capacity: Int

    /// Remembers failures for `lifetime` seconds (0: none), at most `capacity` variants.
    public init(lifetime: Int, capacity: Int = 10_000) {
        self.lifetime = Double(lifetime)
        self.capacity = capacity
    }

    /// Whether `error` is remembered: the same source bytes and options meet it again.
    static func remembers(_ error: ImagingError) -> Bool {
        switch error {
        case .tooSlow, .tooManyPixels, .tooManyFrames, .tooManyScans, .undecodable, .cropOutside, .unsafeSVG:
            true
        case .unsupportedFormat, .formatDisabled, .memoryBudgetBusy, .processingFailed, .badOverlay, .textNotDrawable,
            .outputTooLarge, .tooExpensive, .facesUnavailable:
            false
        }
    }

    /// Remembers `error` for the variant `key` of `sourceKey`, when it is one to remember.
    public func remember(_ error: ImagingError, key: VariantKey, sourceKey: String, now: Double = Date().timeIntervalSince1970) {
        guard lifetime > 0, Self.remembers(error) else { return }
        entries.withLock { entries in
            if entries.count >= capacity, entries[key.hex] == nil,
                let soonest = entries.min(by: { $0.value.expiresAt < $1.value.expiresAt })?.key
            {
                entries.removeValue(forKey: soonest)
            }
            entries[key.hex] = Remembered(error: error, sourceKey: sourceKey, expiresAt: now + lifetime)
        }
    }

    /// The failure remembered for `key`, while it lasts.
    public func recall(_ key: VariantKey, now: Double = Date().timeIntervalSince1970) -> ImagingError? {
        entries.withLock { entries in
            guard let remembered = entries[key.hex] else { return nil }
            guard remembered.expiresAt > now else {
                entries.removeValue(forKey: key.hex)
                return nil
            }
            return remembered.error
        }
    }

    /// Forgets the failures of `sourceKey`'s variants (a purge of the source).
    public func forget(sourceKey: String) {
        entries.withLock { entries in entries = entries.filter { $0.value.sourceKey != sourceKey } }
    }

    /// Forgets every failure (a purge of everything).
    public func forgetAll() {
        entries.withLock { $0.removeAll() }
    }

    /// Variants remembered now.
    public var count: Int { entries.withLock { $0.count } }
}
