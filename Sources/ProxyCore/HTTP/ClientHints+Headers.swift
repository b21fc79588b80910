import Foundation
import HTTPTypes
import ImageCore
import ProxyEngine

extension ClientHints {
    /// The hints of a request's headers (the `Sec-CH-` name wins over the legacy one), parsed leniently:
    /// a hint that is not a positive number is ignored, as browsers' hints are advisory.
    public init(headers: HTTPFields) {
        self.init()
        func value(_ names: [HTTPField.Name]) -> String? {
            names.lazy.compactMap { headers[$0] }.first
        }
        if let text = value([.secCHDPR, .dpr]), let number = Double(text), number.isFinite, number > 0 { dpr = number }
        if let text = value([.secCHWidth, .width]), let number = Int(text), number > 0 { width = number }
        if let text = value([.secCHViewportWidth, .viewportWidth]), let number = Int(text), number > 0 { viewportWidth = number }
        saveData = headers[.saveData].map { $0.trimmingCharacters(in: .whitespaces).lowercased() == "on" } ?? false
    }
}

extension HTTPField.Name {
    static let secCHDPR = HTTPField.Name("Sec-CH-DPR")!
    static let dpr = HTTPField.Name("DPR")!
    static let secCHWidth = HTTPField.Name("Sec-CH-Width")!
    static let width = HTTPField.Name("Width")!
    static let secCHViewportWidth = HTTPField.Name("Sec-CH-Viewport-Width")!
    static let viewportWidth = HTTPField.Name("Viewport-Width")!
    static let saveData = HTTPField.Name("Save-Data")!
    static let acceptCH = HTTPField.Name("Accept-CH")!
}
