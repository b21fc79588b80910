@testable import ImageCore

/// A JPEG asked for at a width (`fit=contain`) as a transform makes it: decoded into memory by
/// ``ScaleOnLoadStep``, then resized by ``ResizeStep``. Nil when the decode is not made in memory.
struct ResizedInMemory {
    let header: SourceHeader
    let box: ResizeBox
    /// The decode ``ScaleOnLoadStep`` made.
    let decoded: ImageCore.VipsImage
    /// What ``ResizeStep`` made of it.
    let variant: ImageCore.VipsImage

    /// `thumbnail`'s arguments for the box and the header.
    var arguments: (width: Int, height: Int, size: Int32, crop: Int32) { box.thumbnailArguments(for: header) }

    init?(_ bytes: [UInt8], width: Int) throws {
        header = try SourceHeader(reading: bytes)
        box = ResizeBox(width: width, height: nil, fit: .contain).coverBoxFitted(to: header)
        let loaded = try ScaleOnLoadStep(box: box).apply(to: bytes, header: header, deadline: nil)
        guard case .decoded(let decoded) = loaded else { return nil }
        self.decoded = decoded
        variant = try ResizeStep(box: box).apply(to: loaded, bytes: bytes, header: header, deadline: nil)
    }
}
