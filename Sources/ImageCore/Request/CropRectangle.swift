/// `crop=x,y,w,h`: a rectangle of the upright source (after EXIF orientation) cut out before resizing.
/// Each number is source pixels when written as an integer (`crop=100,50,800,600`) or a fraction of the
/// source's width or height when written with a decimal point (`crop=0.1,0,0.5,1.0`).
public struct CropRectangle: Sendable, Hashable, CustomStringConvertible {
    /// One coordinate or length.
    public enum Value: Sendable, Hashable, CustomStringConvertible {
        case pixels(Int)
        case fraction(Double)

        func resolved(against size: Int) -> Int {
            switch self {
            case .pixels(let pixels): pixels
            case .fraction(let fraction): Int((fraction * Double(size)).rounded())
            }
        }

        public var description: String {
            switch self {
            case .pixels(let pixels): String(pixels)
            case .fraction(let fraction): "\(fraction)"  // always with a decimal point: 1.0, not 1
            }
        }
    }

    public var x: Value
    public var y: Value
    public var width: Value
    public var height: Value

    /// Parses `x,y,w,h`; nil when it is not four numbers (integers ≥ 0, fractions in 0...1) with a
    /// width and height above zero.
    public init?(parameter text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var values: [Value] = []
        for part in parts {
            guard part.count <= 12 else { return nil }
            if part.contains(".") {
                guard let fraction = Double(part), fraction.isFinite, (0...1).contains(fraction) else { return nil }
                values.append(.fraction(fraction))
            } else {
                guard let pixels = Int(part), pixels >= 0, pixels <= 1_000_000 else { return nil }
                values.append(.pixels(pixels))
            }
        }
        for length in values[2...] {
            switch length {
            case .pixels(let pixels) where pixels == 0: return nil
            case .fraction(let fraction) where fraction == 0: return nil
            default: break
            }
        }
        (x, y, width, height) = (values[0], values[1], values[2], values[3])
    }

    /// The rectangle in pixels of an upright source of `width`×`height`, cut to the source; nil when
    /// nothing of it lies inside.
    public func resolved(width sourceWidth: Int, height sourceHeight: Int) -> (x: Int, y: Int, width: Int, height: Int)? {
        let left = x.resolved(against: sourceWidth)
        let top = y.resolved(against: sourceHeight)
        guard left < sourceWidth, top < sourceHeight else { return nil }
        let cutWidth = min(sourceWidth - left, width.resolved(against: sourceWidth))
        let cutHeight = min(sourceHeight - top, height.resolved(against: sourceHeight))
        guard cutWidth > 0, cutHeight > 0 else { return nil }
        return (left, top, cutWidth, cutHeight)
    }

    public var description: String { "\(x),\(y),\(width),\(height)" }
}
