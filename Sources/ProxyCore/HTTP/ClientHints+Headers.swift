import HTTPTypes
import ImageCore

extension ClientHints {
    /// The hints of a request's headers (``ClientHints/init(header:)``: the `Sec-CH-` name wins over the
    /// legacy one, out-of-range values are ignored).
    public init(headers: HTTPFields) {
        self.init(header: { name in HTTPField.Name(name).flatMap { headers[$0] } })
    }
}

extension HTTPField.Name {
    static let secCHDPR = HTTPField.Name(ClientHints.dprHeaders[0])!
    static let dpr = HTTPField.Name(ClientHints.dprHeaders[1])!
    static let secCHWidth = HTTPField.Name(ClientHints.widthHeaders[0])!
    static let width = HTTPField.Name(ClientHints.widthHeaders[1])!
    static let secCHViewportWidth = HTTPField.Name(ClientHints.viewportWidthHeaders[0])!
    static let viewportWidth = HTTPField.Name(ClientHints.viewportWidthHeaders[1])!
    static let saveData = HTTPField.Name(ClientHints.saveDataHeader)!
    static let acceptCH = HTTPField.Name("Accept-CH")!
}
