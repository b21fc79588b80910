import HTTPTypes
import ImageCore

extension ClientHints {
    /// The hints of a request's headers (``ClientHints/init(header:)``: the `Sec-CH-` name wins over the
    /// legacy one, out-of-range values are ignored).
    public init(headers: HTTPFields) {
        self.init(header: { name in Self.fieldNames[name].flatMap { headers[$0] } })
    }

    /// The hint header names as HTTP field names, made once (not per request).
    static let fieldNames: [String: HTTPField.Name] = Dictionary(
        uniqueKeysWithValues: Kind.allCases.flatMap(headerNames(of:)).map { ($0, HTTPField.Name($0)!) })
}

extension HTTPField.Name {
    static let secCHDPR = ClientHints.fieldNames[ClientHints.headerNames(of: .dpr)[0]]!
    static let dpr = ClientHints.fieldNames[ClientHints.headerNames(of: .dpr)[1]]!
    static let secCHWidth = ClientHints.fieldNames[ClientHints.headerNames(of: .width)[0]]!
    static let width = ClientHints.fieldNames[ClientHints.headerNames(of: .width)[1]]!
    static let secCHViewportWidth = ClientHints.fieldNames[ClientHints.headerNames(of: .viewportWidth)[0]]!
    static let viewportWidth = ClientHints.fieldNames[ClientHints.headerNames(of: .viewportWidth)[1]]!
    static let saveData = ClientHints.fieldNames[ClientHints.saveDataHeader]!
    static let acceptCH = HTTPField.Name("Accept-CH")!
}
