import Foundation
import ImageCore

/// Where the shared tier keeps things in its bucket, under `prefix`:
/// - `v1/<sha256(source key)>/<variant key>`: the variants of one source in one folder, so a purge
///   finds them with one listing (and `.../original`, the source itself, with `storeOriginals`);
/// - `purges/<milliseconds since 1970, 16 digits>-<replica>`: the purge log, one small object per purge
///   holding the source key (`*` for everything), read in key order by every replica. It grows by one
///   object per purge: expire `<prefix>purges/` with a bucket lifecycle rule (a day is plenty).
struct SharedTierLayout: Sendable {
    let prefix: String

    /// The purge-log body that stands for every source.
    static let everything = "*"

    var variantsFolder: String { prefix + "v1/" }
    var purgeFolder: String { prefix + "purges/" }

    func sourceFolder(sourceKey: String) -> String {
        variantsFolder + sha256Hex(Array(sourceKey.utf8)) + "/"
    }

    /// Where a source's original is kept (with its variants, so a purge removes it too).
    func originalKey(sourceKey: String) -> String {
        sourceFolder(sourceKey: sourceKey) + "original"
    }

    func variantKey(sourceKey: String, variant: String) -> String {
        sourceFolder(sourceKey: sourceKey) + variant
    }

    /// The time (seconds since 1970) a purge-log key was written at; nil for another key.
    func time(ofPurgeKey key: String) -> Double? {
        guard key.hasPrefix(purgeFolder) else { return nil }
        let digits = key.dropFirst(purgeFolder.count).prefix(16)
        guard digits.count == 16, digits.allSatisfy(\.isASCIIDigit), let milliseconds = Int64(digits) else { return nil }
        return Double(milliseconds) / 1000
    }

    /// The source key a purge-log object's body names, or nil when the body is not one: empty, longer
    /// than 16 KiB, not UTF-8, or holding a control character (a source key is a URL or `s3://` key as the
    /// intake canonicalised it, or ``everything``).
    static func sourceKey(ofPurgeBody body: [UInt8]) -> String? {
        guard !body.isEmpty, body.count <= 16_384, let text = String(validating: body, as: UTF8.self),
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return text
    }

    /// The purge-log key of a purge at `time` by `replica` (keys sort by time).
    func purgeKey(at time: Double, replica: String) -> String {
        let milliseconds = max(0, min(9_999_999_999_999_999, Int64((time * 1000).rounded(.down))))
        let digits = String(milliseconds)
        return purgeFolder + String(repeating: "0", count: max(0, 16 - digits.count)) + digits + "-" + replica
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
