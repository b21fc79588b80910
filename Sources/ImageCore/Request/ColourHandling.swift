/// What happens to a source's colour space (`colour=`, default `image.colour`).
public enum ColourHandling: String, Sendable, Hashable, CaseIterable {
    /// Every source is converted to sRGB and its profile dropped: right for every screen.
    case srgb
    /// A wide-gamut RGB source (Display P3, Adobe RGB: an ICC profile other than sRGB) keeps its own
    /// space, and its profile is embedded in the output (JPEG, WebP, PNG, JPEG XL), the only metadata
    /// kept. AVIF and GIF outputs are still converted to sRGB: libvips 8.14 writes an AVIF's profile
    /// without the matching colour matrix (decoders then shift its colours), and GIF has no profiles.
    /// sRGB, untagged, grey and CMYK sources are handled as with `srgb`.
    case keep
}
