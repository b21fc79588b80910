/// Why an image could not be produced.
public enum ImagingError: ReportableError, Equatable {
    /// The bytes are not an image format the service reads.
    case unsupportedFormat
    /// The bytes claim a supported format but cannot be decoded.
    case undecodable
    /// The source has more pixels (width x height x frames) than allowed.
    case tooManyPixels(limit: Int)
    /// An animation of more frames than allowed (counted from its container before any decode).
    case tooManyFrames(limit: Int)
    /// The transform memory budget stayed taken by other transforms for too long.
    case memoryBudgetBusy
    /// A JPEG of more scans than allowed (each makes the decoder walk the whole frame again).
    case tooManyScans(limit: Int)
    /// libvips failed while resizing, filtering or encoding.
    case processingFailed
    /// The transform took longer than its limit and was stopped.
    case tooSlow(limitMilliseconds: Int)
    /// `crop` lies wholly outside the (upright) source.
    case cropOutside(crop: String, width: Int, height: Int)
    /// The watermark's image is not an image, cannot be decoded, or is too large.
    case badOverlay(problem: String)
    /// The output would have more pixels than its format allows (JPEG XL's encoder is memory hungry).
    case outputTooLarge(format: String, limit: Int)
    /// `text=` cannot be drawn on this output (wrapped into more lines than a text image may have).
    case textNotDrawable
    /// The source's format is turned off (JPEG XL input, `image.allowJXLInput`).
    case formatDisabled(format: String, key: String)
    /// The transform's estimated CPU is above `image.maxTransformCpuMs` (refused before any work).
    case tooExpensive(estimateMilliseconds: Int, limitMilliseconds: Int)
    /// Face detection cannot run: its cascade file (`image.faceCascade`) could not be loaded.
    case facesUnavailable
    /// An SVG source refers to something outside itself, declares entities, or is too large to render.
    case unsafeSVG(SVGRefusal)

    public var kind: FailureKind {
        switch self {
        case .unsupportedFormat, .formatDisabled: .unsupportedSource
        case .undecodable, .tooManyPixels, .tooManyScans, .tooManyFrames, .cropOutside, .badOverlay, .outputTooLarge, .textNotDrawable,
            .tooExpensive, .unsafeSVG:
            .unusableSource
        case .memoryBudgetBusy: .busy
        case .processingFailed, .facesUnavailable: .internalFailure
        case .tooSlow: .tooSlow
        }
    }

    public var publicMessage: String {
        switch self {
        case .unsupportedFormat: "source is not a supported image (JPEG, PNG, WebP, GIF, AVIF, HEIC/HEIF; JPEG XL and SVG when enabled)"
        case .unsafeSVG(let refusal): refusal.message
        case .facesUnavailable: "face detection is not available on this service (its cascade file, image.faceCascade, could not be loaded)"
        case .undecodable: "source image cannot be decoded"
        case .cropOutside(let crop, let width, let height): "crop \(crop) lies outside the source (\(width)x\(height) upright)"
        case .badOverlay(let problem): "watermark image \(problem)"
        case .outputTooLarge(let format, let limit): "a \(format) output may have at most \(limit) pixels; ask for a smaller size or another format"
        case .textNotDrawable: "text cannot be drawn on this output: it wraps into too many lines; use a smaller text_size, shorter text or a wider output"
        case .formatDisabled(let format, let key): "\(format) sources are turned off on this service (\(key))"
        case .tooExpensive(let estimate, let limit):
            "this transform would take about \(estimate) ms of CPU, above this service's limit of \(limit) ms (image.maxTransformCpuMs); "
                + "ask for a smaller size, a cheaper format (JPEG, WebP) or no max_bytes"
        case .tooManyPixels(let limit): "source image has more than \(limit) pixels"
        case .tooManyScans(let limit): "source JPEG has more than \(limit) scans"
        case .tooManyFrames(let limit): "source animation has more than \(limit) frames"
        case .memoryBudgetBusy: "image transforms are using their whole memory budget; retry later"
        case .processingFailed: "image processing failed"
        case .tooSlow(let limit): "image processing took longer than \(limit) ms and was stopped; retry later"
        }
    }

    public var reason: String {
        switch self {
        case .unsupportedFormat: "unsupported_format"
        case .undecodable: "undecodable"
        case .tooManyPixels: "too_many_pixels"
        case .tooManyScans: "too_many_scans"
        case .tooManyFrames: "too_many_frames"
        case .memoryBudgetBusy: "memory_budget_busy"
        case .processingFailed: "processing_failed"
        case .tooSlow: "transform_timeout"
        case .cropOutside: "crop_outside"
        case .badOverlay: "bad_overlay"
        case .outputTooLarge: "output_too_large"
        case .textNotDrawable: "bad_request"
        case .formatDisabled: "unsupported_format"
        case .tooExpensive: "too_expensive"
        case .unsafeSVG: "unsafe_svg"
        case .facesUnavailable: "faces_unavailable"
        }
    }
}
