/// An encoded output image.
public struct EncodedImage: Sendable {
    /// The encoded bytes.
    public var bytes: [UInt8]
    /// The format they are in.
    public var format: OutputFormat
    /// Output width in pixels.
    public var width: Int
    /// Output height in pixels.
    public var height: Int
    /// The quality it was encoded at, when a size target chose it (`max_bytes`).
    public var chosenQuality: Int?
    /// Whether it fits the size target (false: even the lowest quality tried was larger); nil without one.
    public var fitsSizeTarget: Bool?
    /// Encodes made to find it (more than one under a size target).
    public var encodes = 1
    /// What the transform spent its time on (``TransformPhase``), for traces; empty when not recorded.
    public var phases: [TransformPhase] = []

    public init(bytes: [UInt8], format: OutputFormat, width: Int, height: Int) {
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
    }
}
