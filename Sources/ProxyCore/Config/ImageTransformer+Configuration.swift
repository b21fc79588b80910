import ImageCore

extension ImageTransformer.Settings {
    /// Takes the `image.*` part of the service configuration.
    public init(_ image: ProxyConfiguration.Image) {
        self.init()
        maxSourcePixels = image.maxSourcePixels
        maxFrames = image.maxFrames
        maxSourceFrames = image.maxSourceFrames
        maxTransformMilliseconds = image.maxTransformMilliseconds
        maxTransformBytes = image.maxTransformBytes
        encoding = EncodingSettings(image)
    }
}
