/// The shrink-on-load rule: how far a JPEG or a WebP is reduced while it is decoded, and when a JPEG's
/// DC scans alone are enough (``ScaleOnLoadStep`` carries it out).
extension ResizeBox {
    /// The JPEG shrink-on-load factor (1, 2, 4 or 8) for a baseline JPEG: the largest whose decoded
    /// image still has ``jpegShrinkMargin`` times the output's size, so the final Lanczos3 reduce has
    /// some detail to work with.
    ///
    /// libvips' own rule keeps twice the output's size, which for common thumbnail widths means 1/4
    /// where 1/8 would do; Pillow's draft mode (thumbor) keeps just the output's size, which costs
    /// sharpness when the source is barely 8x the output (2560 px to 300). With 1.25 (measured on the
    /// benchmark corpus, `bench/RESULTS.md`): 3840 px photos to 300 px decode at 1/8, 2560 px ones at
    /// 1/4, and the mean SSIM against a Lanczos3 reduce of the full decode is above thumbor's.
    func jpegShrink(for header: SourceHeader) -> Int {
        let reduction = self.reduction(for: header)
        return [8, 4, 2].first { Double($0) * Self.jpegShrinkMargin <= reduction } ?? 1
    }

    /// How many times the output's size a shrunk-on-load baseline JPEG keeps at least.
    static let jpegShrinkMargin = 1.25

    /// Whether this source is decoded by our own JPEG decoder (``JPEGEighthDecoder``) when it takes the
    /// file, without a crop, at the scale ``ownDecoderShrink(_:)`` picks.
    func mayDecodeEighth(for header: SourceHeader, format: SourceFormat?) -> Bool {
        crop == nil && format == .jpeg && coverBoxFitted(to: header).ownDecoderShrink(header) != nil
    }

    /// The scale our own JPEG decoder (``JPEGEighthDecoder``) makes `header`'s image at for this box
    /// (fitted to the source), or nil when libjpeg decodes it:
    /// - 8: a progressive 4:4:4 or grey JPEG shrunk by 8 or more (what Pillow's draft mode decodes at),
    ///   from its DC scans alone; a baseline one shrunk by as much as makes ``jpegShrink(for:)`` pick 1/8
    ///   (the image is libjpeg's own 1/8 decode, so the output is what libjpeg's made before).
    /// - 4: a baseline grey JPEG, or 4:4:4 with restart markers (``SourceHeader/jpegQuarterDecodable``), for which
    ///   ``jpegShrink(for:)`` picks 1/4 (shrunk by 5 to 10):
    ///   from its DC and first AC terms (``JPEGEighthDecoder/quarterTermsRead``), the sharpness margin's
    ///   1/4 image at little more than the cost of the DC-only 1/8 one.
    func ownDecoderShrink(_ header: SourceHeader) -> Int? {
        guard header.jpegEighthDecodable else { return nil }
        let reduction = reduction(for: header)
        if !header.jpegSequential { return reduction >= 8 ? 8 : nil }
        let shrink = jpegShrink(for: header)
        return shrink == 8 || (shrink == 4 && header.jpegQuarterDecodable) ? shrink : nil
    }

    /// Whether libjpeg decodes this source into memory on the pool thread and the pool thread reduces it
    /// to a forced size (the common `w=` miss of a JPEG the DC decoder does not take) or hands the decode
    /// on as the variant (``wholeDecodeIsTheVariant(for:)``): no crop, and a decode ``ScaleOnLoadStep``
    /// makes in memory.
    func mayDecodeJPEGInMemory(for header: SourceHeader, format: SourceFormat?) -> Bool {
        guard crop == nil, format == .jpeg, !mayDecodeEighth(for: header, format: format) else { return false }
        let fitted = coverBoxFitted(to: header)
        return (fitted.thumbnailArguments(for: header).size == Size.force.rawValue || wholeDecodeIsTheVariant(for: header))
            && ScaleOnLoadStep(box: fitted).decodesJPEGInMemory(header)
    }

    /// Whether `thumbnail` with `arguments` hands an image of `width` x `height` (in the source's axes)
    /// back at its own size: no crop, and either forced to exactly that size or only allowed to shrink
    /// into a box it fits.
    static func thumbnailKeepsTheSize(width: Int, height: Int, arguments: (width: Int, height: Int, size: Int32, crop: Int32)) -> Bool {
        guard arguments.crop == Crop.none.rawValue else { return false }
        switch arguments.size {
        case Size.force.rawValue: return width == arguments.width && height == arguments.height
        case Size.down.rawValue: return width <= arguments.width && height <= arguments.height
        default: return false
        }
    }

    /// Whether the source's whole decode is the variant as it is: nothing to reduce or crop (a width
    /// capped at the source's own), no turn and no colour conversion (``ResizeStep`` then skips
    /// `thumbnail`).
    func wholeDecodeIsTheVariant(for header: SourceHeader) -> Bool {
        guard crop == nil, frames == 1, header.orientation <= 1, !header.colourManaged else { return false }
        let fitted = coverBoxFitted(to: header)
        if case .anchored = fitted.coverPlan { return false }
        return Self.thumbnailKeepsTheSize(width: header.width, height: header.height, arguments: fitted.thumbnailArguments(for: header))
    }

    /// The scale (0 < scale <= 1) a still WebP is decoded at: libwebp scales while it decodes, and what
    /// it scales to is kept at ``webpShrinkMargin`` times the output's size, so that Lanczos3 makes the
    /// rest; within three times (1 returned) it is decoded whole and Lanczos3 makes it all. libvips'
    /// `thumbnail` lets libwebp scale all the way to the output; libwebp's rescaler averages areas, and
    /// its thumbnails were below thumbor's (Pillow: whole decode, then Lanczos) in SSIM against a Lanczos3
    /// reduce of the whole image (`bench/RESULTS.md`, 2026-11-26 (the srcset scenario); at 1920 to 3840 px of a 4096 px WebP
    /// too, 2026-11-26 (WebP decoded once into memory)).
    func webpScale(for header: SourceHeader) -> Double {
        let reduction = self.reduction(for: header)
        guard frames == 1, reduction > Self.webpShrinkMargin else { return 1 }
        return Self.webpShrinkMargin / reduction
    }

    /// How many times the output's size a scaled-on-load WebP keeps at least. 3, measured at 300 px on the
    /// benchmark's 4 WebPs and 12 unseen ones (Plasma wallpapers saved as WebP q80), mean SSIM against a
    /// Lanczos3 reduce of the whole image before encoding: libwebp to the output 0.9888, twice 0.9920,
    /// three times 0.9943, four times 0.9916 (from 4x, libvips' resize box-shrinks before Lanczos3); for
    /// 10–25% more CPU than libwebp scaling to the output (a whole decode costs ~4x).
    static let webpShrinkMargin = 3.0
}
