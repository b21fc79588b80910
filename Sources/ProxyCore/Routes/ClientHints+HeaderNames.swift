#if !FUZZ_STANDALONE
import ImageCore
#endif

/// The request headers client hints are read from and answers vary on: the one list `Accept-CH`, `Vary`,
/// CORS preflights and the memory-hit front (which leaves requests carrying any of them to the router)
/// are made from. Plain Swift, so the fuzz targets build it with the framing parser.
extension ClientHints {
    /// The headers a kind of hint is read from, the `Sec-CH-` name first, then its legacy name.
    static func headerNames(of kind: Kind) -> [String] {
        switch kind {
        case .width: ["Sec-CH-Width", "Width"]
        case .viewportWidth: ["Sec-CH-Viewport-Width", "Viewport-Width"]
        case .dpr: ["Sec-CH-DPR", "DPR"]
        case .saveData: ["Save-Data"]
        }
    }

    /// The `Save-Data` header.
    static let saveDataHeader = headerNames(of: .saveData)[0]
    /// Every hint header (not `Save-Data`), the `Sec-CH-` names first.
    static let hintHeaders = [Kind.dpr, .width, .viewportWidth].map { headerNames(of: $0)[0] }
        + [Kind.dpr, .width, .viewportWidth].map { headerNames(of: $0)[1] }
    /// The answer header that tells browsers which hints to send: `Accept-CH`.
    static let acceptCH = hintHeaders.joined(separator: ", ")

    /// The `Vary` names of the kinds of hint an answer depends on, in their order.
    static func varyNames(of kinds: [Kind]) -> [String] {
        kinds.flatMap(headerNames(of:))
    }

    /// The hints of a request's headers, `header` looking a value up by name (the `Sec-CH-` name wins
    /// over the legacy one), parsed leniently: a hint that is not a number within its range
    /// (``dprRange``, ``widthRange``) is ignored, as browsers' hints are advisory.
    init(header: (String) -> String?) {
        func value(_ kind: Kind) -> String? { Self.headerNames(of: kind).lazy.compactMap(header).first }
        self.init(
            dpr: value(.dpr).flatMap(Self.parseDPR),
            width: value(.width).flatMap(Self.parseWidth),
            viewportWidth: value(.viewportWidth).flatMap(Self.parseWidth),
            saveData: value(.saveData).map(Self.isOn) ?? false)
    }

    /// Whether a `Save-Data` value says `on` (any case, blanks around it ignored).
    static func isOn(_ value: String) -> Bool {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        let bytes = value.utf8.drop(while: blank).reversed().drop(while: blank).reversed()
        return bytes.count == 2 && bytes.first! | 0x20 == UInt8(ascii: "o") && bytes.last! | 0x20 == UInt8(ascii: "n")
    }
}
