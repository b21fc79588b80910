/// `max_bytes`: encodes at the highest quality whose output fits a byte budget, for the formats whose
/// size follows their quality (JPEG, WebP, AVIF; PNG and GIF are encoded once and ignore it).
///
/// A bounded search, at most ``maxEncodes`` encodes: the requested (or default) quality first; when that
/// is too large, a bisection of the qualities below it, or, when it is more than ``farOverFactor`` times
/// too large, quality 1 first, which ends the search at once when it does not fit either. The answer is the highest quality tried that
/// fits, so it is the highest that fits within the search's steps. When none fits, the smallest output
/// tried (the lowest quality) is answered, marked as not fitting.
struct SizeTargetEncoder {
    /// Encodes at most.
    static let maxEncodes = 6
    /// A first encode more than this many times the budget is "far over": the lowest quality is tried next.
    static let farOverFactor = 2

    let budget: Int
    let startQuality: Int

    /// Whether `format` follows a size target.
    static func applies(to format: OutputFormat) -> Bool {
        format == .jpeg || format == .webp || format == .avif || format == .jxl
    }

    /// Runs the search with `encode` (one call per quality tried).
    func search(_ encode: (Int) throws(ImagingError) -> EncodedImage) throws(ImagingError) -> EncodedImage {
        var first = try encode(startQuality)
        first.chosenQuality = startQuality
        guard first.bytes.count > budget else {
            first.fitsSizeTarget = true
            return first
        }
        var best: EncodedImage?
        var smallest = first
        var low = 1, high = startQuality - 1, encodes = 1
        if first.bytes.count > budget * Self.farOverFactor, low <= high {
            // Far over: the lowest quality next. Sizes fall with quality, so when even it does not fit,
            // nothing will: answered at once, not after the whole search (issue #56: six AVIF encodes of a
            // 4096 px image ran to the deadline on a target the first encode had shown out of reach).
            var lowest = try encode(low)
            lowest.chosenQuality = low
            encodes += 1
            guard lowest.bytes.count <= budget else {
                var answer = lowest.bytes.count < first.bytes.count ? lowest : first
                answer.fitsSizeTarget = false
                answer.encodes = encodes
                return answer
            }
            best = lowest
            low += 1
        }
        while low <= high, encodes < Self.maxEncodes {
            let quality = (low + high) / 2
            var attempt = try encode(quality)
            attempt.chosenQuality = quality
            encodes += 1
            if attempt.bytes.count <= budget {
                best = attempt
                low = quality + 1
            } else {
                if attempt.bytes.count < smallest.bytes.count { smallest = attempt }
                high = quality - 1
            }
        }
        if var best {
            best.fitsSizeTarget = true
            best.encodes = encodes
            return best
        }
        smallest.fitsSizeTarget = false
        smallest.encodes = encodes
        return smallest
    }
}
