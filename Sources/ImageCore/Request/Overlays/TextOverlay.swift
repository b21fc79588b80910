/// Text drawn on the output (`text=`), with libvips' `text` (Pango) in the configured font.
public struct TextOverlay: Sendable, Hashable, CustomStringConvertible {
    /// The text as given (UTF-8, at most ``maxLength`` characters); drawn literally, never as markup.
    public var text: String
    /// Font size in pixels (`text_size`, 6...200, default 24).
    public var size = 24
    /// Colour; its alpha multiplies the opacity (`text_color`, default white).
    public var colour = RGBAColour.white
    /// Gravity, offsets and opacity (`text_g`, `text_x`, `text_y`, `text_opacity`); scale and tile do not apply.
    public var placement = OverlayPlacement()

    public init(text: String) {
        self.text = text
    }

    /// Most characters (Unicode scalars) of `text`.
    public static let maxLength = 200
    /// The sizes `text_size` accepts, in pixels.
    public static let sizeRange = 6...200

    /// The text escaped for Pango markup, so that `<`, `&` and quotes are drawn, not interpreted.
    public var markup: String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    public var description: String { "\(text.utf8.count):\(text)|\(size)|\(colour)|\(placement)" }
}
