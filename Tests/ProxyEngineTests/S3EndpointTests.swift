import ImageCore
import Testing

@testable import ProxyEngine

/// Where an `s3://` source's request goes and how it is signed (no network: the object store tests in
/// ProxyServerTests run the real thing).
@Suite struct S3EndpointTests {
    private func object(_ url: String) throws -> SourceURL.S3Object {
        try #require(try SourceURL(parsing: url).object)
    }

    @Test func objectURLsFollowTheEndpointAndPathStyle() throws {
        var endpoint = S3Endpoint()
        // AWS (no endpoint): virtual-hosted by default, path style when asked.
        #expect(endpoint.url(bucket: "images", encodedKey: "a/b%20c.jpg") == "https://images.s3.us-east-1.amazonaws.com/a/b%20c.jpg")
        endpoint.region = "eu-west-1"
        endpoint.pathStyle = .true
        #expect(endpoint.url(bucket: "images", encodedKey: "a.jpg") == "https://s3.eu-west-1.amazonaws.com/images/a.jpg")
        // A custom endpoint: path style by default (MinIO, SeaweedFS), virtual-hosted when asked.
        endpoint = S3Endpoint()
        endpoint.endpoint = "http://127.0.0.1:8333/"
        #expect(endpoint.url(bucket: "images", encodedKey: "a.jpg") == "http://127.0.0.1:8333/images/a.jpg")
        endpoint.endpoint = "https://minio.internal"
        endpoint.pathStyle = .false
        #expect(endpoint.url(bucket: "images", encodedKey: "x/y.png") == "https://images.minio.internal/x/y.png")
    }

    @Test func onlyListedBucketsAreReachable() throws {
        var sources = S3Sources()
        sources.endpoint.endpoint = "http://127.0.0.1:9000"
        guard case .failure(.refused(let why)) = sources.url(of: try object("s3://images/a.jpg")) else {
            Issue.record("no bucket listed: refused")
            return
        }
        #expect(why.contains("sources.s3.buckets"))
        sources.buckets = ["images"]
        #expect(try sources.url(of: object("s3://images/a.jpg")).get() == "http://127.0.0.1:9000/images/a.jpg")
        #expect(throws: FetchError.refused("its bucket is not listed")) { try sources.url(of: object("s3://other/a.jpg")).get() }
    }

    @Test func credentialsComeFromTheEnvironmentWhenTheFileLeavesThemEmpty() {
        var endpoint = S3Endpoint()
        endpoint.takeCredentials(from: ["AWS_ACCESS_KEY_ID": "AKIA1", "AWS_SECRET_ACCESS_KEY": "s1", "AWS_SESSION_TOKEN": "t1"])
        #expect(endpoint.accessKeyId == "AKIA1" && endpoint.secretAccessKey == "s1" && endpoint.sessionToken == "t1")
        #expect(endpoint.signingProvider == "aws:amz:us-east-1:s3")
        #expect(endpoint.headerLines == ["x-amz-security-token: t1"])
        var configured = S3Endpoint()
        configured.accessKeyId = "AKIA2"
        configured.secretAccessKey = "s2"
        configured.takeCredentials(from: ["AWS_ACCESS_KEY_ID": "AKIA1", "AWS_SECRET_ACCESS_KEY": "s1"])
        #expect(configured.accessKeyId == "AKIA2" && configured.secretAccessKey == "s2", "the file wins")
        #expect(S3Endpoint().signingProvider == nil, "no credentials: unsigned")
    }

    @Test func s3URLsAreCanonicalAndKeysCannotClimb() throws {
        let source = try SourceURL(parsing: "s3://images/photos/a%20b.jpg")
        #expect(source.absoluteString == "s3://images/photos/a%20b.jpg" && source.host == "images")
        #expect(source.object?.bucket == "images" && source.object?.encodedKey == "photos/a%20b.jpg")
        for bad in ["s3://images/../x", "s3://images/a/./b", "s3://images/%2e%2e/x", "s3://-images/a", "s3://images", "s3://i/a"] {
            #expect(throws: RequestError.self, "\(bad)") { try SourceURL(parsing: bad) }
        }
    }
}
