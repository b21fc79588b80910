/// Where and how an overlay (a watermark image or text) is drawn on each frame of the output.
public struct OverlayPlacement: Sendable, Hashable, CustomStringConvertible {
    /// The edge or corner it sits against (`smart` is not a placement).
    public var gravity: Gravity = .southeast
    /// Pixels in from the gravity's edge horizontally (for a tiled overlay: the gap between copies).
    public var x = 0
    /// Pixels in from the gravity's edge vertically (for a tiled overlay: the gap between copies).
    public var y = 0
    /// 0 (invisible) ... 1 (as drawn).
    public var opacity = 1.0
    /// The overlay's width as a fraction of the output's width (0: its own size). An overlay wider or
    /// taller than the output is always shrunk to fit.
    public var scale = 0.0
    /// Repeat the overlay over the whole frame from its top-left corner (gravity then does not apply).
    public var tile = false

    public init() {}

    /// The top-left corner of a `size` overlay on a `frame`: offsets count inwards from the gravity's
    /// edges, and move a centred overlay right and down.
    public func origin(frame: (width: Int, height: Int), overlay: (width: Int, height: Int)) -> (left: Int, top: Int) {
        let anchor = gravity.anchor ?? (0.5, 0.5)
        func along(_ frameSize: Int, _ size: Int, _ fraction: Double, _ offset: Int) -> Int {
            let free = frameSize - size
            switch fraction {
            case 0: return offset
            case 1: return free - offset
            default: return free / 2 + offset
            }
        }
        return (along(frame.width, overlay.width, anchor.x, x), along(frame.height, overlay.height, anchor.y, y))
    }

    public var description: String {
        "\(gravity.rawValue),\(x),\(y),\(opacity),\(scale),\(tile ? 1 : 0)"
    }
}
