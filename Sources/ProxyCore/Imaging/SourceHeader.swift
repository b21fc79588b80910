import CVipsShim

/// What an encoded image's header says, read without decoding pixels.
public struct SourceHeader: Sendable, Equatable {
    /// Stored width (before EXIF orientation).
    public var width: Int
    /// Stored height (before EXIF orientation).
    public var height: Int
    /// Frames (pages) in the file; 1 for still images.
    public var frames: Int
    /// EXIF orientation 1...8.
    public var orientation: Int

    /// Width and height as displayed, after EXIF orientation.
    public var orientedSize: (width: Int, height: Int) {
        (5...8).contains(orientation) ? (height, width) : (width, height)
    }

    /// Pixels a full decode would produce: width x height x frames.
    public var totalPixels: Int { width * height * max(1, frames) }

    /// Reads the header of `bytes`.
    /// - Throws: ``ImagingError/undecodable`` when libvips cannot read it.
    public init(reading bytes: [UInt8]) throws(ImagingError) {
        Vips.start()
        var width: Int32 = 0, height: Int32 = 0, pages: Int32 = 0, orientation: Int32 = 0, bands: Int32 = 0
        let status = bytes.withUnsafeBytes { raw in
            ipx_vips_header(raw.baseAddress, raw.count, &width, &height, &pages, &orientation, &bands)
        }
        guard status == 0 else {
            _ = Vips.takeError()
            throw .undecodable
        }
        self.width = Int(width)
        self.height = Int(height)
        self.frames = Int(max(1, pages))
        self.orientation = (1...8).contains(Int(orientation)) ? Int(orientation) : 1
    }
}
