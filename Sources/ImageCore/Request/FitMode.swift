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
}
