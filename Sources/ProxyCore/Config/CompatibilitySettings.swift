/// The URL dialects of other image proxies that the server also answers, each off by default and served
/// under its own prefix (`compat.*`). A dialect URL becomes the native request it means (``DialectRequest``):
/// the same limits, address policy, allowlist, caches and variant as its `/img` twin.
public struct CompatibilitySettings: Sendable, Equatable {
    /// imgproxy's URLs (`/<signature>/<options>/plain/<source>`, `/<signature>/<options>/<base64 source>`).
    public var imgproxy = Imgproxy()
    /// thumbor's URLs (`/unsafe/300x200/smart/<source>`, `/<signature>/…`).
    public var thumbor = Thumbor()

    public init() {}

    /// Whether every dialect that is on needs signed URLs: imgproxy with keys, thumbor with a security key and
    /// no `unsafe/` URLs (``AccessMode``).
    public var everyDialectSigned: Bool {
        (!imgproxy.enabled || !imgproxy.keys.filter { !$0.isEmpty }.isEmpty)
            && (!thumbor.enabled || (!thumbor.securityKey.isEmpty && !thumbor.allowUnsafe))
    }

    /// imgproxy's dialect (`compat.imgproxy.*`).
    public struct Imgproxy: Sendable, Equatable {
        /// Answer imgproxy URLs. Key `compat.imgproxy.enabled`, default false.
        public var enabled = false
        /// Hex-encoded HMAC keys, as imgproxy's `IMGPROXY_KEY` (also read): the first signs, every one
        /// verifies. Empty: signatures are not checked (any value, e.g. `insecure`). Key `compat.imgproxy.keys`.
        public var keys: [String] = []
        /// Hex-encoded salts, one per key (`IMGPROXY_SALT`, also read). Key `compat.imgproxy.salts`.
        public var salts: [String] = []
        /// Bytes of the HMAC digest a signature carries, 1...32 (`IMGPROXY_SIGNATURE_SIZE`, also read).
        /// Key `compat.imgproxy.signatureSize`, default 32.
        public var signatureSize = 32
        /// The path prefix the URLs live under. Key `compat.imgproxy.prefix`, default `/`.
        public var prefix = "/"
        /// The named overlay (`overlays.<name>`) that `watermark:1` draws; empty refuses `watermark`.
        /// Key `compat.imgproxy.watermark`, default empty.
        public var watermark = ""
    }

    /// thumbor's dialect (`compat.thumbor.*`).
    public struct Thumbor: Sendable, Equatable {
        /// Answer thumbor URLs. Key `compat.thumbor.enabled`, default false.
        public var enabled = false
        /// thumbor's `SECURITY_KEY`: HMAC-SHA1 key of signed URLs. Key `compat.thumbor.securityKey`.
        public var securityKey = ""
        /// Answer `/unsafe/…` URLs (thumbor's `ALLOW_UNSAFE_URL`). Key `compat.thumbor.allowUnsafe`, default false.
        public var allowUnsafe = false
        /// The path prefix the URLs live under. Key `compat.thumbor.prefix`, default `/`.
        public var prefix = "/"
    }
}
