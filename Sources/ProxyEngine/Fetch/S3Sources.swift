import ImageCore

/// `s3://BUCKET/KEY` sources (`sources.s3.*`): the endpoint they are read from and the buckets that may
/// be read. A bucket not listed is refused (403) before any connection; with no bucket listed (the
/// default) every `s3://` URL is.
public struct S3Sources: Sendable, Equatable {
    /// The endpoint and its credentials.
    public var endpoint = S3Endpoint()
    /// The buckets sources may come from. Default none.
    public var buckets: [String] = []

    public init() {}

    /// The URL to download `object` from, or the refusal.
    func url(of object: SourceURL.S3Object) -> Result<String, FetchError> {
        guard buckets.contains(object.bucket) else {
            return .failure(.refused(buckets.isEmpty ? "s3 sources are not enabled (sources.s3.buckets)" : "its bucket is not listed"))
        }
        return .success(endpoint.url(bucket: object.bucket, encodedKey: object.encodedKey))
    }
}
