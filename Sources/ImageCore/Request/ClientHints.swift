/// What a browser says about the device in request headers: client hints (`Sec-CH-DPR`, `Sec-CH-Width`,
/// `Sec-CH-Viewport-Width` and their legacy names `DPR`, `Width`, `Viewport-Width`) and `Save-Data`.
/// Read from headers by the server (`ClientHints(header:)`, which knows the header names); pure data here.
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

    /// One kind of hint, which an answer that read it depends on (the server names its headers).
    public enum Kind: Sendable, Equatable, CaseIterable {
        /// The layout width of the image.
        case width
        /// The viewport width.
        case viewportWidth
        /// The device pixel ratio.
        case dpr
        /// `Save-Data`.
        case saveData
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
}
