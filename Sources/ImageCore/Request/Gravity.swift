/// Where `fit=cover` keeps the image when it crops: a compass point, the centre, or `smart`
/// (libvips' attention strategy: the busiest, most salient region).
public enum Gravity: String, Sendable, Hashable, CaseIterable {
    case centre, north, south, east, west, northeast, northwest, southeast, southwest, smart
    /// The crop around the faces in the source (all of them when they fit, else the largest), found by
    /// ``FaceDetector``; `smart` where none is found.
    case face

    /// Parses `g=`; `center` is accepted for `centre`.
    init?(parameter: String) {
        self.init(rawValue: parameter == "center" ? "centre" : parameter)
    }

    /// Where the crop box sits along each axis, 0 (left/top) ... 1 (right/bottom); nil for `smart`.
    var anchor: (x: Double, y: Double)? {
        switch self {
        case .centre: (0.5, 0.5)
        case .north: (0.5, 0)
        case .south: (0.5, 1)
        case .east: (1, 0.5)
        case .west: (0, 0.5)
        case .northeast: (1, 0)
        case .northwest: (0, 0)
        case .southeast: (1, 1)
        case .southwest: (0, 1)
        case .smart, .face: nil
        }
    }
}

/// A focal point `fp=x,y` in fractions of the width and height (0...1): the crop keeps it as central as it can.
public struct FocalPoint: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    public var description: String { "\(x),\(y)" }
}
