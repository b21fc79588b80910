@testable import ImageCore

/// A JPEG asked for at a width (`fit=contain`) as a transform makes it: decoded into memory by
/// ``ScaleOnLoadStep`` (and reduced as its rows arrive where the reduce takes it), then resized by
/// ``ResizeStep``. Nil when the decode is not made in memory.
struct ResizedInMemory {
    let header: SourceHeader
    let box: ResizeBox
    /// The step's decode; when the step reduced the rows as they arrived (and so never held it),
    /// libjpeg's whole decode at the step's shrink.
    let decoded: ImageCore.VipsImage
    /// What ``ResizeStep`` made of the step's image.
    let variant: ImageCore.VipsImage
    /// The step reduced the decode as its rows arrived (``ScaleOnLoadStep/Loaded/reduced(_:)``).
    let reducedWhileDecoding: Bool

    /// `thumbnail`'s arguments for the box and the header.
    var arguments: (width: Int, height: Int, size: Int32, crop: Int32) { box.thumbnailArguments(for: header) }

    init?(_ bytes: [UInt8], width: Int) throws {
        header = try SourceHeader(reading: bytes)
        box = ResizeBox(width: width, height: nil, fit: .contain).coverBoxFitted(to: header)
        let loaded = try ScaleOnLoadStep(box: box).apply(to: bytes, header: header, deadline: nil)
        switch loaded {
        case .decoded(let decoded):
            self.decoded = decoded
            reducedWhileDecoding = false
        case .reduced:
            guard let decoded = try ScaleOnLoadStep.decodeScaled(bytes, shrink: box.jpegShrink(for: header), header: header, deadline: nil)
            else { return nil }
            self.decoded = decoded
            reducedWhileDecoding = true
        default:
            return nil
        }
        variant = try ResizeStep(box: box).apply(to: loaded, bytes: bytes, header: header, deadline: nil)
    }
}
