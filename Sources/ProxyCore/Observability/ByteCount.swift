import Foundation
import ImageCore
import ProxyEngine

/// Byte counts for people: B, KiB, MiB, GiB, TiB (powers of 1024), one decimal.
public enum ByteCount {
    /// `bytes` in the largest unit that keeps the number at or above 1, e.g. `256.0 MiB`.
    public static func text(_ bytes: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = bytes, unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(value)) B" : String(format: "%.1f ", value) + units[unit]
    }
}
