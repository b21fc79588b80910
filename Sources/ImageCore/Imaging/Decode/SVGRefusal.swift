import CVipsShim

/// Why an SVG source is refused before it is rendered (`svg_check.c`): what it would make the renderer
/// read or expand, or a document too large to estimate.
public enum SVGRefusal: String, Sendable, Equatable {
    case notXML, notSVG, entity, externalReference, xInclude, tooComplex

    /// The refusal `ipx_svg_check` returned, or nil for `IPX_SVG_OK`.
    init?(status: Int32) {
        switch status {
        case Int32(IPX_SVG_OK): return nil
        case Int32(IPX_SVG_NOT_XML): self = .notXML
        case Int32(IPX_SVG_NOT_SVG): self = .notSVG
        case Int32(IPX_SVG_ENTITY): self = .entity
        case Int32(IPX_SVG_EXTERNAL): self = .externalReference
        case Int32(IPX_SVG_XINCLUDE): self = .xInclude
        default: self = .tooComplex
        }
    }

    /// What the client is told.
    public var message: String {
        switch self {
        case .notXML: "SVG source is not well-formed XML"
        case .notSVG: "SVG source's root element is not <svg>"
        case .entity: "SVG source declares or uses XML entities, which are refused"
        case .externalReference:
            "SVG source refers to something outside itself (an href or url() other than #id or an embedded PNG, JPEG, GIF "
                + "or WebP, a CSS @import or a stylesheet instruction); such references are refused, never fetched"
        case .xInclude: "SVG source uses XInclude, which is refused"
        case .tooComplex: "SVG source has more than \(IPX_SVG_MAX_ELEMENTS) elements"
        }
    }
}
