/// What happens to a source's colour space (`colour=`, default `image.colour`).
public enum ColourHandling: String, Sendable, Hashable, CaseIterable {
    /// Every source is converted to sRGB and its profile dropped: right for every screen.
    case srgb
    /// A wide-gamut RGB source (Display P3, Adobe RGB: an ICC profile other than sRGB) keeps its own
    /// space, and its profile is embedded in the output (JPEG, WebP, AVIF, PNG, JPEG XL), the only
    /// metadata kept from the source (libvips 8.14's AVIF writer adds a minimal EXIF block of its own:
    /// resolution, size, colour space). GIF has no profiles: it is converted to sRGB. sRGB, untagged,
    /// grey and CMYK sources are handled as with `srgb`.
    case keep
}
