import CFaceShim
import CVipsShim
import Synchronization

/// Finds frontal faces with OpenCV's cascade classifier (`face_detect.cpp`, the improved LBP frontal-face
/// cascade of Debian's opencv-data; thumbor uses a Haar cascade, 4-5x slower here for the same faces): on a
/// copy of the image at most ``searchSide`` pixels on its long side (smaller images are searched at
/// ``smallestSearchSide``, so that faces of a thumbnail are large enough for the smallest face searched),
/// in grey. The work is bounded by that size: about 15-40 ms
/// of OpenCV's CPU on 640 px (2-core AMD EPYC VM) and a few megabytes (``workingSetBytes``) whatever the source.
public enum FaceDetector {
    /// The longest side faces are searched at.
    static let searchSide = 640
    /// Images whose long side is smaller are enlarged to it (at most 4x) before the search.
    static let smallestSearchSide = 480
    /// The smallest face searched for, in pixels of the search image.
    static let smallestFace: Int32 = 20
    /// What a search holds besides the image it searches: the search copy (640x640, grey and equalised),
    /// OpenCV's pyramid and integral images, the cascade. Reserved in the transform budget.
    public static let workingSetBytes = 24 << 20

    /// The cascade every search uses (`image.faceCascade`). Default: opencv-data's frontal face cascade.
    public static let defaultCascade = "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml"

    private static let cascade = Mutex<(path: String, loaded: Bool?)>((defaultCascade, nil))

    /// Uses the cascade at `path` for every search from now on; false when it cannot be loaded (searches
    /// then fail with ``ImagingError/facesUnavailable``).
    @discardableResult
    public static func use(cascade path: String) -> Bool {
        cascade.withLock { state in
            state.path = path
            state.loaded = ipx_faces_start(path) == 0
            return state.loaded ?? false
        }
    }

    /// Whether the cascade is loaded (loading the default on first use).
    static var isAvailable: Bool {
        cascade.withLock { state in
            if state.loaded == nil { state.loaded = ipx_faces_start(state.path) == 0 }
            return state.loaded ?? false
        }
    }

    /// The faces in `bytes` (a source of `header`), upright, searched on a thumbnail of it.
    /// - Throws: ``ImagingError/undecodable``; ``ImagingError/facesUnavailable`` without a cascade.
    public static func search(source bytes: [UInt8], header: SourceHeader) throws(ImagingError) -> FaceSearch {
        guard isAvailable else { throw .facesUnavailable }
        let side = Int32(searchSide)
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            ipx_vips_thumbnail_buffer_pages(
                raw.baseAddress, raw.count, &output, side, side, ResizeBox.Size.down.rawValue, ResizeBox.Crop.none.rawValue, 1,
                header.colourManaged ? 1 : 0)
        }
        guard status == 0, let output else {
            _ = Vips.takeError()
            throw .undecodable
        }
        let thumbnail = try VipsImage(taking: output).producing { ipx_vips_copy_memory($0, $1) }
        let upright = header.orientedSize
        return FaceSearch(faces: try faces(in: thumbnail), width: upright.width, height: upright.height)
    }

    /// The faces in `image` (upright), largest first.
    /// - Throws: ``ImagingError/processingFailed`` when libvips or OpenCV fails; ``ImagingError/facesUnavailable``.
    static func faces(in image: VipsImage) throws(ImagingError) -> [FaceBox] {
        guard isAvailable else { throw .facesUnavailable }
        let longSide = max(image.width, image.height)
        var search = image
        let scale = longSide > searchSide ? Double(searchSide) / Double(longSide)
            : longSide < smallestSearchSide ? min(4, Double(smallestSearchSide) / Double(longSide)) : 1
        if scale != 1 { search = try search.producing { ipx_vips_resize_by($0, $1, scale) } }
        if search.hasAlpha { search = try search.producing { ipx_vips_flatten($0, $1, 255, 255, 255) } }
        if search.bands >= 3 { search = try search.producing { ipx_vips_to_greyscale($0, $1) } }
        search = try search.producing { ipx_vips_cast_uchar($0, $1) }
        let grey = try search.pixels()
        guard grey.count == search.width * search.height else { throw .processingFailed }
        var boxes = [ipx_face_box](repeating: ipx_face_box(), count: Int(IPX_FACES_MAX))
        let found = grey.withUnsafeBufferPointer { pixels in
            ipx_faces_detect(
                pixels.baseAddress, Int32(search.width), Int32(search.height), search.width, smallestFace, &boxes, Int32(IPX_FACES_MAX))
        }
        guard found >= 0 else { throw .processingFailed }
        let width = Double(search.width), height = Double(search.height)
        return boxes.prefix(Int(found)).map { box in
            FaceBox(x: Double(box.x) / width, y: Double(box.y) / height, width: Double(box.width) / width, height: Double(box.height) / height)
        }
    }
}
