import ImageCore

/// imgproxy's URLs under their prefix: the signature checked as imgproxy checks it, the URL turned into
/// the native request it means (``ImgproxyURL``).
struct ImgproxyFront: Sendable {
    let prefix: DialectPrefix
    /// Nil when no key is configured: any signature (`insecure`, by convention) is taken.
    let signer: ImgproxySigner?
    let choices: ImgproxyURL.Choices

    init(settings: CompatibilitySettings.Imgproxy) throws(ConfigurationError) {
        prefix = DialectPrefix(settings.prefix)
        signer = try ImgproxySigner(keys: settings.keys, salts: settings.salts, signatureSize: settings.signatureSize)
        choices = ImgproxyURL.Choices(watermarkOverlay: settings.watermark.isEmpty ? nil : settings.watermark)
    }

    /// The native request of a request target under the prefix (`rest` starts at the signature's `/`).
    /// - Throws: ``DialectSignatureError`` (403) for a wrong signature, ``RequestError`` (400) for a bad option.
    func translate(_ rest: Substring) throws -> DialectRequest {
        let url = try ImgproxyURL(target: String(rest))
        if signer == nil, url.signature.contains(":") {
            // As imgproxy: the first segment is the signature even when none is checked.
            throw RequestError(parameter: "signature", problem: "the URL starts with a signature segment (any text, e.g. insecure, when signing is off)")
        }
        if let signer, !signer.verify(signature: url.signature, path: url.signedPath) {
            throw DialectSignatureError.invalid(dialect: "imgproxy")
        }
        return try url.translated(choices: choices)
    }
}
