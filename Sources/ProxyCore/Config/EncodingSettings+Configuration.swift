import ImageCore
import ProxyEngine

extension EncodingSettings {
    /// Takes the encoder settings of the service configuration.
    public init(_ image: ProxyConfiguration.Image) {
        self.init()
        jpegQuality = image.jpegQuality
        webpQuality = image.webpQuality
        avifQuality = image.avifQuality
        avifEffort = image.avifEffort
        pngCompression = image.pngCompression
    }
}
