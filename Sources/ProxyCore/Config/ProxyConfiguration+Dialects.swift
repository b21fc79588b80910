extension CompatibilitySettings.Imgproxy {
    /// imgproxy's own `IMGPROXY_KEY`, `IMGPROXY_SALT` and `IMGPROXY_SIGNATURE_SIZE`, taken as they are when
    /// `compat.imgproxy.keys` (and salts, size) are not set: an imgproxy deployment keeps its secrets.
    mutating func takeImgproxyEnvironment(_ environment: [String: String]) {
        if keys.isEmpty, let key = environment["IMGPROXY_KEY"], !key.isEmpty { keys = [key] }
        if salts.isEmpty, let salt = environment["IMGPROXY_SALT"], !salt.isEmpty { salts = [salt] }
        if signatureSize == 32, let text = environment["IMGPROXY_SIGNATURE_SIZE"], let size = Int(text), (1...32).contains(size) {
            signatureSize = size
        }
    }
}

extension ProxyConfiguration {
    /// Checks the dialects against each other and the rest of the configuration.
    /// - Throws: ``ConfigurationError`` for two dialects on one prefix, imgproxy keys without salts (or not
    ///   hex), or a `compat.imgproxy.watermark` that names no overlay.
    func checkDialects() throws(ConfigurationError) {
        if compat.imgproxy.enabled, compat.thumbor.enabled,
            DialectPrefix(compat.imgproxy.prefix) == DialectPrefix(compat.thumbor.prefix)
        {
            throw ConfigurationError(
                "compat.imgproxy.prefix and compat.thumbor.prefix are both '\(compat.imgproxy.prefix)': two dialects cannot share a "
                    + "prefix; give one of them its own (e.g. compat.thumbor.prefix: /thumbor)")
        }
        _ = try ImgproxySigner(keys: compat.imgproxy.keys, salts: compat.imgproxy.salts, signatureSize: compat.imgproxy.signatureSize)
        let overlay = compat.imgproxy.watermark
        if !overlay.isEmpty, overlays.definitions[overlay] == nil {
            throw ConfigurationError("compat.imgproxy.watermark names '\(overlay)', which is not an overlay (overlays.<name>)")
        }
    }
}
