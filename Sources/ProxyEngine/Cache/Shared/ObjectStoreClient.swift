import CCurlShim
import Foundation
import ImageCore

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The few S3 operations the shared tier needs (GET, PUT, DELETE, ListObjectsV2) on one bucket of an
/// S3-compatible endpoint, through libcurl on the shared ``CurlMultiDriver``, signed with AWS Signature
/// V4 by libcurl itself. Every call has its own deadline; nothing here throws: a failure is a value the
/// tier counts and treats as a miss.
final class ObjectStoreClient: Sendable {
    /// One answer of the store.
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
        /// Header names lower-cased.
        var headers: [String: String]
    }

    /// Why a call got no answer.
    enum Failure: Error, Equatable {
        /// No connection, a reset, a body larger than allowed.
        case transfer
        /// The deadline passed.
        case timeout
    }

    let endpoint: S3Endpoint
    let bucket: String
    private let driver: CurlMultiDriver

    init(endpoint: S3Endpoint, bucket: String, driver: CurlMultiDriver) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.driver = driver
    }

    /// `GET` of `key`: at most `maxBytes` of body.
    /// `headers`: further request header lines (a trace context).
    func get(_ key: String, timeoutMilliseconds: Int, maxBytes: Int, headers: [String] = []) async -> Result<Answer, Failure> {
        await perform(
            method: "GET", key: key, query: nil, body: nil, headers: headers, timeoutMilliseconds: timeoutMilliseconds, maxBytes: maxBytes)
    }

    /// `PUT` of `body` as `key` with `contentType` and user metadata (`x-amz-meta-<name>`).
    func put(
        _ key: String, body: [UInt8], contentType: String, metadata: [String: String], timeoutMilliseconds: Int,
        headers extra: [String] = []
    ) async -> Result<Answer, Failure> {
        // (No "Expect:" line to suppress 100-continue: libcurl 7.88 signs it empty and the store refuses.)
        var headers = ["Content-Type: \(contentType)"] + extra
        headers += metadata.sorted { $0.key < $1.key }.map { "x-amz-meta-\($0.key): \($0.value)" }
        return await perform(
            method: "PUT", key: key, query: nil, body: body, headers: headers, timeoutMilliseconds: timeoutMilliseconds,
            maxBytes: 64 * 1024)
    }

    /// `DELETE` of `key`.
    func delete(_ key: String, timeoutMilliseconds: Int) async -> Result<Answer, Failure> {
        await perform(method: "DELETE", key: key, query: nil, body: nil, headers: [], timeoutMilliseconds: timeoutMilliseconds, maxBytes: 64 * 1024)
    }

    /// The keys under `prefix`, in order, after `startAfter` (every page of ListObjectsV2, up to `limit`).
    func list(prefix: String, startAfter: String? = nil, limit: Int = 100_000, timeoutMilliseconds: Int) async -> Result<[String], Failure> {
        var keys: [String] = []
        var token: String?
        repeat {
            // Parameters sorted by name and encoded as SigV4's canonical query wants them.
            var parameters = [("list-type", "2"), ("prefix", prefix)]
            if let token { parameters.append(("continuation-token", token)) }
            if let startAfter, token == nil { parameters.append(("start-after", startAfter)) }
            let query = parameters.sorted { $0.0 < $1.0 }.map { "\($0.0)=\(Self.queryEncoded($0.1))" }.joined(separator: "&")
            let answer = await perform(
                method: "GET", key: "", query: query, body: nil, headers: [], timeoutMilliseconds: timeoutMilliseconds,
                maxBytes: 16 << 20)
            switch answer {
            case .failure(let failure): return .failure(failure)
            case .success(let answer):
                guard answer.status == 200 else { return .failure(.transfer) }
                let page = ListBucketPage(parsing: answer.body)
                keys += page.keys
                token = page.isTruncated ? page.nextToken : nil
            }
        } while token != nil && keys.count < limit
        return .success(keys)
    }

    /// RFC 3986 unreserved characters kept, everything else percent-encoded (SigV4's rule).
    static func queryEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_.~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// An object key as a URL path: each segment percent-encoded as SigV4's canonical URI wants it (RFC 3986
    /// unreserved characters kept, `/` between segments). Keys come from listings too (the purge log), where
    /// a space, `?`, `#` or a lone `%` must reach the store as the key's own characters.
    static func pathEncoded(_ key: String) -> String {
        key.split(separator: "/", omittingEmptySubsequences: false).map { queryEncoded(String($0)) }.joined(separator: "/")
    }

    private func perform(
        method: String, key: String, query: String?, body: [UInt8]?, headers extra: [String], timeoutMilliseconds: Int,
        maxBytes: Int
    ) async -> Result<Answer, Failure> {
        guard let handle = curl_easy_init() else { return .failure(.transfer) }
        defer { curl_easy_cleanup(handle) }
        guard let transfer = ipx_transfer_new(max(1, maxBytes)) else { return .failure(.transfer) }
        defer { ipx_transfer_free(transfer) }
        let answer = DownloadedBody(limit: max(1, maxBytes))
        transfer.pointee.sink = DownloadedBody.sink
        transfer.pointee.sink_context = answer.context
        // The endpoint is the operator's: every address it resolves to may be connected to.
        var code = ipx_transfer_attach(handle, transfer, { _, _, _ in 1 }, nil)
        func set(_ option: CURLoption, _ value: Int) { if code == CURLE_OK { code = ipx_curl_set_long(handle, option, value) } }
        func set(_ option: CURLoption, _ value: String) { if code == CURLE_OK { code = ipx_curl_set_string(handle, option, value) } }
        var url = endpoint.url(bucket: bucket, encodedKey: Self.pathEncoded(key))
        if let query { url += "?" + query }
        set(CURLOPT_URL, url)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, 0)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_TIMEOUT_MS, max(1, timeoutMilliseconds))
        set(CURLOPT_CONNECTTIMEOUT_MS, max(1, timeoutMilliseconds))
        set(CURLOPT_PROXY, "")
        set(CURLOPT_CUSTOMREQUEST, method)
        if let provider = endpoint.signingProvider {
            set(CURLOPT_AWS_SIGV4, provider)
            set(CURLOPT_USERPWD, endpoint.signingCredentials)
        }
        // S3 wants the payload's SHA-256 named in a signed header (libcurl 7.88 does not add it).
        let payload = body ?? []
        var lines = extra + endpoint.headerLines
        lines.append("x-amz-content-sha256: \(sha256Hex(payload))")
        if let body {
            if code == CURLE_OK { code = ipx_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)) }
            if code == CURLE_OK {
                // Copied by libcurl (its length set above): the buffer need not outlive this call.
                let padded = body.isEmpty ? [0] : body
                code = padded.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { characters in
                        ipx_curl_set_string(handle, CURLOPT_COPYPOSTFIELDS, characters.baseAddress!)
                    }
                }
            }
        } else if method == "GET" {
            set(CURLOPT_HTTPGET, 1)
        }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for line in lines { headerList = curl_slist_append(headerList, line) }
        if code == CURLE_OK, let headerList { code = ipx_curl_set_list(handle, CURLOPT_HTTPHEADER, headerList) }
        guard code == CURLE_OK else { return .failure(.transfer) }
        let outcome = await driver.perform(handle)
        withExtendedLifetime(answer) {}
        switch outcome {
        case CURLE_OK: break
        case CURLE_OPERATION_TIMEDOUT: return .failure(.timeout)
        default: return .failure(.transfer)
        }
        guard transfer.pointee.body_too_large == 0 else { return .failure(.transfer) }
        var status = 0
        if ipx_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK { return .failure(.transfer) }
        let received = answer.bytes
        let raw = FetchedSource.parseHeaderLines(transfer.pointee.headers.map { String(cString: $0) } ?? "")
        let fields = Dictionary(raw.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        return .success(Answer(status: status, body: received, headers: fields))
    }
}

/// One page of a ListObjectsV2 answer, read with Foundation's XML parser.
struct ListBucketPage {
    var keys: [String] = []
    var isTruncated = false
    var nextToken: String?

    init(parsing bytes: [UInt8]) {
        let delegate = Collector()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = delegate
        parser.shouldResolveExternalEntities = false
        _ = parser.parse()
        keys = delegate.keys
        isTruncated = delegate.truncated == "true"
        nextToken = delegate.token.isEmpty ? nil : delegate.token
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var keys: [String] = []
        var truncated = ""
        var token = ""
        private var path: [String] = []
        private var text = ""

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            path.append(name)
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            switch (path.dropLast().last, name) {
            case ("Contents", "Key"): keys.append(text)
            case (_, "IsTruncated"): truncated = text
            case (_, "NextContinuationToken"): token = text
            default: break
            }
            path.removeLast()
            text = ""
        }
    }
}
