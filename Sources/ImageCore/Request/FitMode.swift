/// How the output fills the requested w×h box.
public enum FitMode: String, Sendable, Hashable, CaseIterable {
    /// Inside the box, aspect ratio kept (the default).
    case contain
    /// Fills the box exactly, the overflow cropped around the centre.
    case cover
    /// Stretched to exactly w×h.
    case fill
    /// Inside the box, then padded to exactly w×h with the background colour.
    case pad
    /// `cover` when the box and the source are both landscape or both portrait, else `contain` (imgproxy's
    /// `auto`); `contain` when the box has one side.
    case auto

    /// The mode a source of `width`×`height` (upright) gets: `auto` resolved, the others as they are.
    func resolved(boxWidth: Int?, boxHeight: Int?, sourceWidth: Int, sourceHeight: Int) -> FitMode {
        guard self == .auto else { return self }
        guard let boxWidth, let boxHeight else { return .contain }
        let boxLandscape = boxWidth >= boxHeight
        let sourceLandscape = sourceWidth >= sourceHeight
        return boxLandscape == sourceLandscape ? .cover : .contain
    }
}
