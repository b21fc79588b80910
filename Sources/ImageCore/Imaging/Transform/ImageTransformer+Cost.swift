import CVipsShim

/// The CPU a transform is estimated to cost, and the budget it is held to.
extension ImageTransformer {
    /// The CPU the transform is estimated to cost (``TransformCost``): the decode at the plan's scale and
    /// every encode of the output.
    func cost(of request: ImageRequest, header: SourceHeader, box: ResizeBox, choice: FormatChoice, source: SourceFormat?)
        -> TransformCost
    {
        let output: OutputFormat
        switch choice {
        case .fixed(let fixed): output = fixed
        case .jpegOrPNG, .source: output = header.hasAlpha ? .png : .jpeg
        }
        let shrink = source == .jpeg ? box.coverBoxFitted(to: header).jpegShrink(for: header) : 1
        let frames = max(1, min(box.frames, header.frames))
        // An SVG is drawn at the output's scale, its canvas counted again for each filter and surface.
        let decoded = source == .svg
            ? Int(min(Double(box.coverBoxFitted(to: header).svgRenderPixels(for: header)) * TransformCost.svgCanvases(header), 1e15))
            : header.width / shrink * (header.height / shrink) * frames
        let encodes = request.maxBytes != nil && SizeTargetEncoder.applies(to: output) ? SizeTargetEncoder.maxEncodes : 1
        return TransformCost(
            source: source, decodedPixels: decoded, format: output, outputPixels: box.estimatedOutputPixels(for: header),
            encodes: encodes)
    }

    /// The CPU estimate of the variant `request` asks of `source` (``TransformCost``), from its header alone;
    /// nil when the header cannot be read (the transform itself then says why).
    public func estimatedCost(_ source: [UInt8], request: ImageRequest, choice: FormatChoice) -> TransformCost? {
        guard let (_, header) = try? SourceHeader.checked(
            source, maxSourcePixels: maxSourcePixels, maxSourceFrames: maxSourceFrames, allowJXL: allowJXLInput,
            allowSVG: allowSVGInput)
        else { return nil }
        let format = SourceFormat(sniffing: source)
        let choice = choice.resolved(forSource: format)
        let box = boundedBox(for: request, header: header, choice: choice)
        return cost(of: request, header: header, box: box, choice: choice, source: format)
    }

    /// Refuses a plan whose ``cost(of:header:box:choice:source:)`` is over ``maxTransformCpuMilliseconds``.
    /// - Throws: ``ImagingError/tooExpensive(estimateMilliseconds:limitMilliseconds:)``.
    func checkCost(of request: ImageRequest, header: SourceHeader, box: ResizeBox, choice: FormatChoice, source: SourceFormat?)
        throws(ImagingError)
    {
        guard maxTransformCpuMilliseconds > 0 else { return }
        let estimate = cost(of: request, header: header, box: box, choice: choice, source: source).milliseconds
        guard estimate <= maxTransformCpuMilliseconds else {
            throw .tooExpensive(estimateMilliseconds: estimate, limitMilliseconds: maxTransformCpuMilliseconds)
        }
    }
}
