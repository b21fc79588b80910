/// The overlays the configuration defines (`overlays.<name>`) and what requests may ask for beyond them.
public struct OverlayCatalog: Sendable, Equatable {
    /// A named overlay: an image and where it goes.
    public struct Definition: Sendable, Equatable {
        /// Where its image comes from (http(s) or `s3://`), fetched like any source.
        public var source: SourceURL
        public var placement: OverlayPlacement

        public init(source: SourceURL, placement: OverlayPlacement) {
            self.source = source
            self.placement = placement
        }
    }

    /// No overlays; `wmurl` and `text` refused.
    public static let none = OverlayCatalog()

    /// Named overlays, `wm=<name>`.
    public var definitions: [String: Definition] = [:]
    /// Whether `wmurl=` (a per-request overlay image) is accepted (`overlays.allowUrl`, default false).
    public var allowURL = false
    /// Whether `text=` is accepted (`overlays.allowText`, default false).
    public var allowText = false

    public init(definitions: [String: Definition] = [:], allowURL: Bool = false, allowText: Bool = false) {
        self.definitions = definitions
        self.allowURL = allowURL
        self.allowText = allowText
    }

    /// An overlay name: 1 to 32 of `a-z`, `0-9`, `-`, `_` (as preset names).
    public static func isValidName(_ name: String) -> Bool { PresetTable.isValidName(name) }
}
