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

    public init(bytes: [UInt8], format: OutputFormat, width: Int, height: Int) {
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
    }
}
