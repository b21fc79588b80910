import ImageCore

/// thumbor's URLs under their prefix: `unsafe/` when the operator allows it, else the signature checked as
/// thumbor checks it; the URL turned into the native request it means (``ThumborURL``).
struct ThumborFront: Sendable {
    let prefix: DialectPrefix
    let signer: ThumborSigner?
    let allowUnsafe: Bool

    init(settings: CompatibilitySettings.Thumbor) {
        prefix = DialectPrefix(settings.prefix)
        signer = ThumborSigner(securityKey: settings.securityKey)
        allowUnsafe = settings.allowUnsafe
    }

    /// The native request of a request target under the prefix (`rest` starts at the signature's `/`).
    /// - Throws: ``DialectSignatureError`` (403) for `unsafe/` when not allowed or a wrong signature,
    ///   ``RequestError`` (400) for a bad part or filter.
    func translate(_ rest: Substring) throws -> DialectRequest {
        let url = try ThumborURL(target: String(rest))
        if url.signature == "unsafe" {
            guard allowUnsafe else { throw DialectSignatureError.unsafeNotAllowed }
        } else {
            guard let signer, signer.verify(signature: url.signature, path: url.signedPath) else { throw DialectSignatureError.invalid(dialect: "thumbor") }
        }
        return try url.translated()
    }
}
