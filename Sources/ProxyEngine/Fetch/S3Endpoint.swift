import Foundation
import ImageCore

/// An S3-compatible endpoint and the credentials for it: where an object's URL points and how libcurl
/// signs the request (AWS Signature V4, `CURLOPT_AWS_SIGV4`: libcurl computes the signature itself).
///
/// The endpoint is the operator's, so the address policy does not judge it (a loopback endpoint works),
/// but an `s3://` source can reach nothing else: its URL is built here from the endpoint, the bucket
/// (checked against S3's naming rules and the listed buckets) and the key.
public struct S3Endpoint: Sendable, Equatable {
    /// The endpoint's base URL (`http://127.0.0.1:8333`, `https://minio.internal`); empty for AWS's
    /// regional endpoint (`https://s3.<region>.amazonaws.com`). Default empty.
    public var endpoint = ""
    /// The signing region. Default `us-east-1`.
    public var region = "us-east-1"
    /// `true`: `endpoint/bucket/key`; `false`: `bucket.endpoint-host/key` (virtual-hosted); `auto` (the
    /// default): path style for a custom endpoint, virtual-hosted for AWS.
    public var pathStyle = PathStyle.auto
    /// The access key id; empty: unsigned requests (a public bucket). Default: `AWS_ACCESS_KEY_ID`.
    public var accessKeyId = ""
    /// The secret access key. Default: `AWS_SECRET_ACCESS_KEY`.
    public var secretAccessKey = ""
    /// A session token for temporary credentials (`x-amz-security-token`). Default: `AWS_SESSION_TOKEN`.
    public var sessionToken = ""

    /// How an object's URL names its bucket.
    public enum PathStyle: String, Sendable, Equatable, CaseIterable {
        case auto, `true`, `false`
    }

    public init() {}

    /// Fills what the configuration left empty from the standard AWS environment variables
    /// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`).
    public mutating func takeCredentials(from environment: [String: String]) {
        guard accessKeyId.isEmpty, let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty else { return }
        accessKeyId = key
        secretAccessKey = environment["AWS_SECRET_ACCESS_KEY"] ?? ""
        if sessionToken.isEmpty { sessionToken = environment["AWS_SESSION_TOKEN"] ?? "" }
    }

    /// Whether requests use path style (`endpoint/bucket/key`).
    public var usesPathStyle: Bool {
        switch pathStyle {
        case .true: true
        case .false: false
        case .auto: !endpoint.isEmpty
        }
    }

    /// The HTTP(S) URL of `key` (percent-encoded) in `bucket`.
    public func url(bucket: String, encodedKey: String) -> String {
        let base = endpoint.isEmpty ? "https://s3.\(region).amazonaws.com" : String(endpoint.trimmingSuffix("/"))
        if usesPathStyle { return "\(base)/\(bucket)/\(encodedKey)" }
        guard var components = URLComponents(string: base), let host = components.host else {
            return "\(base)/\(bucket)/\(encodedKey)"
        }
        components.host = "\(bucket).\(host)"
        // The key is appended to the text, never set through `percentEncodedPath`: Foundation's setter traps
        // on a path that is not valid percent-encoding, and keys may come from a bucket listing.
        components.percentEncodedPath = ""
        guard let root = components.string else { return "\(base)/\(bucket)/\(encodedKey)" }
        return root + "/" + encodedKey
    }

    /// `CURLOPT_AWS_SIGV4`'s provider string, or nil when unsigned.
    var signingProvider: String? {
        accessKeyId.isEmpty ? nil : "aws:amz:\(region):s3"
    }

    /// `CURLOPT_USERPWD` for signing: the access key id and the secret.
    var signingCredentials: String { "\(accessKeyId):\(secretAccessKey)" }

    /// Header lines the request carries besides what libcurl adds.
    var headerLines: [String] {
        sessionToken.isEmpty ? [] : ["x-amz-security-token: \(sessionToken)"]
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> Substring {
        var text = Substring(self)
        while text.hasSuffix(suffix) { text = text.dropLast(suffix.count) }
        return text
    }
}
