import Foundation

/// What a browser says about the device in request headers: client hints (`Sec-CH-DPR`, `Sec-CH-Width`,
/// `Sec-CH-Viewport-Width` and their legacy names `DPR`, `Width`, `Viewport-Width`) and `Save-Data`.
/// Read from headers by the server (`ClientHints(headers:)`); pure data here.
public struct ClientHints: Sendable, Equatable {
    /// Device pixels per CSS pixel.
    public var dpr: Double?
    /// The layout width of the image in device pixels.
    public var width: Int?
    /// The viewport width in CSS pixels.
    public var viewportWidth: Int?
    /// `Save-Data: on`.
    public var saveData = false

    public init(dpr: Double? = nil, width: Int? = nil, viewportWidth: Int? = nil, saveData: Bool = false) {
        self.dpr = dpr
        self.width = width
        self.viewportWidth = viewportWidth
        self.saveData = saveData
    }

    /// The request headers hints are read from, each a `Sec-CH-` name first, then its legacy name.
    public static let dprHeaders = ["Sec-CH-DPR", "DPR"]
    public static let widthHeaders = ["Sec-CH-Width", "Width"]
    public static let viewportWidthHeaders = ["Sec-CH-Viewport-Width", "Viewport-Width"]
    public static let saveDataHeader = "Save-Data"
    /// Every hint header, the `Sec-CH-` names first: the one list `Accept-CH`, `Vary`, CORS preflights and
    /// the memory-hit front (which leaves requests carrying any of them to the router) are made from.
    public static let hintHeaders = [dprHeaders, widthHeaders, viewportWidthHeaders].map { $0[0] }
        + [dprHeaders, widthHeaders, viewportWidthHeaders].map { $0[1] }

    /// The hints of a request's headers, `header` looking a value up by name (the `Sec-CH-` name wins
    /// over the legacy one), parsed leniently: a hint that is not a number within its range
    /// (``dprRange``, ``widthRange``) is ignored, as browsers' hints are advisory.
    public init(header: (String) -> String?) {
        func value(_ names: [String]) -> String? { names.lazy.compactMap(header).first }
        self.init(
            dpr: value(Self.dprHeaders).flatMap(Self.parseDPR),
            width: value(Self.widthHeaders).flatMap(Self.parseWidth),
            viewportWidth: value(Self.viewportWidthHeaders).flatMap(Self.parseWidth),
            saveData: header(Self.saveDataHeader).map { $0.trimmingCharacters(in: .whitespaces).lowercased() == "on" } ?? false)
    }

    /// The pixel ratios a `DPR` hint may state; outside, the hint is ignored (devices report 1 to 4).
    public static let dprRange: ClosedRange<Double> = 0.1...16
    /// The widths a `Width` or `Viewport-Width` hint may state, in pixels; outside, the hint is ignored.
    public static let widthRange: ClosedRange<Int> = 1...65_535

    /// A `DPR` hint's value, or nil when it is not a finite number within ``dprRange``.
    public static func parseDPR(_ text: String) -> Double? {
        guard text.utf8.count <= 16, let number = Double(text), number.isFinite, dprRange.contains(number) else { return nil }
        return number
    }

    /// A `Width` or `Viewport-Width` hint's value, or nil when it is not an integer within ``widthRange``.
    public static func parseWidth(_ text: String) -> Int? {
        guard text.utf8.count <= 16, let number = Int(text), widthRange.contains(number) else { return nil }
        return number
    }

    /// Which headers a request without explicit `w`, `dpr` and `q` reads (what its response varies on).
    public struct Policy: Sendable, Equatable {
        /// Whether client hints are read (`http.clientHints`).
        public var clientHints: Bool
        /// The widths a hinted width is rounded up to (ascending; above the last, the last).
        public var widths: [Int]
        /// The quality for `Save-Data: on` without `q`; 0 ignores `Save-Data` (`http.saveDataQuality`).
        public var saveDataQuality: Int

        public init(clientHints: Bool = false, widths: [Int] = Self.defaultWidths, saveDataQuality: Int = 0) {
            self.clientHints = clientHints
            self.widths = widths.sorted()
            self.saveDataQuality = saveDataQuality
        }

        /// The default width steps: common layout widths from phone to 4K.
        public static let defaultWidths = [160, 320, 480, 640, 750, 828, 1080, 1200, 1440, 1920, 2048, 2560, 3840]

        /// Nothing is read from headers.
        public static let none = Policy()

        /// The smallest step at or above `width` (the largest step above them all).
        func step(_ width: Int) -> Int {
            widths.first { $0 >= width } ?? widths.last ?? width
        }

        /// A hinted pixel ratio rounded up to a half (1, 1.5, ... 4): few distinct variants.
        static func quantise(_ dpr: Double) -> Double {
            guard dpr.isFinite else { return 1 }
            return min(4, max(1, (dpr * 2).rounded(.up) / 2))
        }
    }

    /// The response headers that tell browsers which hints to send: `Accept-CH`.
    public static let acceptCH = hintHeaders.joined(separator: ", ")
}
