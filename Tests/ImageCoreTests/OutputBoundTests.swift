import Testing
import TestSupport

@testable import ImageCore

/// The box arithmetic held to `image.maxDimension` (issue #63): ``ResizeBox/bounded(toMaxDimension:for:)``
/// on random header sizes from 1 px to past `Int32`'s reach in the product, and every box a request can
/// ask for. No conversion traps, no libvips argument leaves `Int32`, no output or cover intermediate
/// passes its bound, and ordinary boxes are left as they were.
@Suite struct OutputBoundTests {
    static let limit = 4096

    /// A random box as the intake makes them: sides 1...limit or absent, every fit, `enlarge` either way.
    static func randomBox(_ random: inout SeededRandom) -> ResizeBox {
        func side() -> Int? { random.next(4) == 0 ? nil : 1 + random.next(limit) }
        var box = ResizeBox(width: side(), height: side(), fit: [.contain, .cover, .fill, .pad][random.next(4)])
        box.enlarge = random.next(2) == 0
        box.gravity = Gravity.allCases[random.next(Gravity.allCases.count)]
        if random.next(5) == 0 { box.focalPoint = FocalPoint(x: Double(random.next(101)) / 100, y: Double(random.next(101)) / 100) }
        return box
    }

    /// A random source side: mostly ordinary, often extreme (up to 1,000,000 px).
    static func randomSide(_ random: inout SeededRandom) -> Int {
        switch random.next(4) {
        case 0: 1 + random.next(4)
        case 1: 1 + random.next(8000)
        default: 1 + random.next(1_000_000)
        }
    }

    /// The longest side libvips' `thumbnail` makes from `arguments` (before a crop) for a source of
    /// `width` x `height`: the box's scale, covering when it crops, containing otherwise.
    static func longestThumbnailSide(width: Int, height: Int, arguments: (width: Int, height: Int, size: Int32, crop: Int32)) -> Double {
        let across = Double(arguments.width) / Double(width)
        let down = Double(arguments.height) / Double(height)
        if arguments.size == ResizeBox.Size.force.rawValue { return Double(max(arguments.width, arguments.height)) }
        var scale = arguments.crop == ResizeBox.Crop.none.rawValue ? min(across, down) : max(across, down)
        if arguments.size == ResizeBox.Size.down.rawValue { scale = min(scale, 1) }
        return Double(max(width, height)) * scale
    }

    @Test func everyBoxOnRandomHeadersStaysWithinTheBound() {
        var random = SeededRandom(seed: 63)
        for _ in 0..<200_000 {
            let header = SourceHeader(width: Self.randomSide(&random), height: Self.randomSide(&random))
            let box = Self.randomBox(&random).bounded(toMaxDimension: Self.limit, for: header)
            let fitted = box.coverBoxFitted(to: header)
            let arguments = fitted.thumbnailArguments(for: header)
            #expect(arguments.width >= 1 && arguments.height >= 1)
            #expect(arguments.width <= Int(Int32.max) && arguments.height <= Int(Int32.max))
            let longest = Self.longestThumbnailSide(width: header.width, height: header.height, arguments: arguments)
            // What `thumbnail` makes: the output (contain, fill) or a cover's intermediate (the crop follows).
            let bound = fitted.fit == .cover && fitted.width != nil && fitted.height != nil
                ? max(Double(Self.limit * ResizeBox.coverIntermediateFactor), Double(max(header.width, header.height)))
                : Double(Self.limit)
            // An anchored cover's width is rounded up before `thumbnail` derives the height from it: up to
            // one pixel times the aspect ratio over.
            let rounding = Double(max(header.width, header.height)) / Double(min(header.width, header.height)) + 1
            if fitted.width != nil || fitted.height != nil {
                #expect(longest <= bound + rounding, "\(header.width)x\(header.height) \(box): \(longest)")
            }
            if let width = fitted.width { #expect(width <= Self.limit) }
            if let height = fitted.height { #expect(height <= Self.limit) }
            _ = fitted.reduction(for: header)
            _ = box.estimatedOutputPixels(for: header)
        }
    }

    @Test func theCrashingRequestBecomesALimitedBox() {
        let wide = SourceHeader(width: 600_000, height: 1)
        var cover = ResizeBox(width: 4096, height: 4096, fit: .cover)
        cover.enlarge = true
        let bounded = cover.bounded(toMaxDimension: 4096, for: wide)
        #expect(bounded.width == 4096 && bounded.height == 1)
        var derived = ResizeBox(width: nil, height: 4096, fit: .contain)
        derived.enlarge = true
        let strip = derived.bounded(toMaxDimension: 4096, for: SourceHeader(width: 20_000, height: 100))
        #expect(strip.width == 4096 && strip.height == 4096 && strip.fit == .contain)
    }

    @Test func ordinaryBoxesAreLeftAsTheyWere() {
        var random = SeededRandom(seed: 6300)
        for _ in 0..<20_000 {
            // Sources up to 2:1, boxes whose derived side stays within the limit.
            let width = 100 + random.next(7900)
            let height = max((width + 1) / 2, min(width * 2, 100 + random.next(7900)))
            let header = SourceHeader(width: width, height: height)
            var box = Self.randomBox(&random)
            if box.width == nil || box.height == nil { box.enlarge = false }
            if box.width == nil, box.height == nil { box.width = 300 }
            if box.width == nil || box.height == nil, max(width, height) > Self.limit { continue }
            let bounded = box.bounded(toMaxDimension: Self.limit, for: header)
            #expect(bounded.width == box.width && bounded.height == box.height && bounded.fit == box.fit, "\(width)x\(height) \(box)")
        }
    }
}
