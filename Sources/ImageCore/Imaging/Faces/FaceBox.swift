/// A face found in an upright image, as fractions of the image's width and height (0...1), so that it
/// holds at any scale of the same picture.
public struct FaceBox: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The box's centre.
    public var centre: (x: Double, y: Double) { (x + width / 2, y + height / 2) }

    /// The smallest box holding `self` and `other`.
    public func union(_ other: FaceBox) -> FaceBox {
        let left = min(x, other.x), top = min(y, other.y)
        let right = max(x + width, other.x + other.width), bottom = max(y + height, other.y + other.height)
        return FaceBox(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The box in pixels of an image of `width` x `height`, grown by `margin` of its size on every side
    /// and held inside the image (at least one pixel).
    func pixels(width imageWidth: Int, height imageHeight: Int, margin: Double = 0) -> (x: Int, y: Int, width: Int, height: Int) {
        let grownX = (x - width * margin) * Double(imageWidth), grownY = (y - height * margin) * Double(imageHeight)
        let grownWidth = width * (1 + 2 * margin) * Double(imageWidth), grownHeight = height * (1 + 2 * margin) * Double(imageHeight)
        let left = Int(max(0, min(Double(imageWidth - 1), grownX.rounded(.down))))
        let top = Int(max(0, min(Double(imageHeight - 1), grownY.rounded(.down))))
        let right = Int(max(Double(left + 1), min(Double(imageWidth), (grownX + grownWidth).rounded(.up))))
        let bottom = Int(max(Double(top + 1), min(Double(imageHeight), (grownY + grownHeight).rounded(.up))))
        return (left, top, right - left, bottom - top)
    }
}

/// The faces found in a source, with the upright size they were found in (``FaceDetector``).
public struct FaceSearch: Sendable, Hashable {
    /// The faces, largest first.
    public var faces: [FaceBox]
    /// The source's upright size, in its own pixels.
    public var width: Int
    public var height: Int

    public init(faces: [FaceBox], width: Int, height: Int) {
        self.faces = faces
        self.width = width
        self.height = height
    }
}
