import CCurlShim
import Foundation
import ImageCore

/// One download through the shared ``CurlMultiDriver``, configured from ``OriginFetcher/Settings``:
/// each hop of a redirect chain is one libcurl easy transfer.
///
/// Cancelling the calling task aborts the running hop; its received beginning is kept in
/// ``PartialDownloads`` when the origin allows resuming, and a later transfer of the same URL asks only
/// for the rest (`Range` + `If-Range`).
struct OriginTransfer {
    let url: String
    let settings: OriginFetcher.Settings
    let policyBox: PolicyBox
    let driver: CurlMultiDriver
    let partials: PartialDownloads
    /// Validators of a stored copy: the request becomes conditional and a 304 is a success.
    var validators: OriginValidators? = nil
    /// Set for an object on the S3 endpoint: signed (SigV4), no redirects, no host allowlist or
    /// per-origin headers (the URL was built from the endpoint).
    var s3: S3Endpoint? = nil
    /// Sent as they are with every hop: the trace context (`traceparent`, `tracestate`).
    var extraHeaderLines: [String] = []

    /// How one request of the chain ended.
    private enum Hop {
        case finished(Result<FetchedSource, FetchError>)
        case redirect(to: String)
    }

    /// Runs the transfer, following redirects itself (at most `maxRedirects`, http/https only,
    /// allowlist and per-origin headers judged again for every host).
    /// - Throws: `CancellationError` when the calling task was cancelled (the transfer is aborted).
    func perform() async throws(CancellationError) -> Result<FetchedSource, FetchError> {
        let deadline = ContinuousClock.now + .milliseconds(settings.timeoutMilliseconds)
        var current = url
        for hop in 0...settings.maxRedirects {
            guard let components = URLComponents(string: current), let scheme = components.scheme?.lowercased(),
                let host = components.host?.lowercased()
            else { return .failure(.originFailure("invalid redirect")) }
            guard scheme == "http" || scheme == "https" else {
                return .failure(.refused("redirected to a scheme other than http or https"))
            }
            if s3 != nil, hop > 0 { return .failure(.originFailure("the object store answered a redirect")) }
            guard s3 != nil || settings.allowlist.allows(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) else {
                return .failure(.refused(hop == 0 ? "its host is not allowed" : "redirected to a host that is not allowed"))
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return .failure(.timeout) }
            let milliseconds = max(1, Int(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            switch try await performOnce(current, host: host, remainingMilliseconds: milliseconds) {
            case .finished(let result): return result
            case .redirect(let next): current = next
            }
        }
        return .failure(.originFailure("more than \(settings.maxRedirects) redirects"))
    }

    private func performOnce(_ url: String, host: String, remainingMilliseconds: Int) async throws(CancellationError) -> Hop {
        guard let handle = curl_easy_init() else { return .finished(.failure(.originFailure("cannot start a transfer"))) }
        defer { curl_easy_cleanup(handle) }
        // A conditional request revalidates a stored copy; only a plain download resumes.
        let partial = validators == nil ? partials.take(url) : nil
        let maxBody = max(1, settings.maxSourceBytes - (partial?.bytes.count ?? 0))
        guard let transfer = ipx_transfer_new(maxBody) else {
            return .finished(.failure(.originFailure("out of memory")))
        }
        defer { ipx_transfer_free(transfer) }
        let body = DownloadedBody(limit: maxBody)
        transfer.pointee.sink = DownloadedBody.sink
        transfer.pointee.sink_context = body.context

        let context = Unmanaged.passUnretained(policyBox).toOpaque()
        var code = ipx_transfer_attach(handle, transfer, { context, family, address in
            guard let context, let address, let ip = IPAddress(socketAddress: address, family: family) else { return 0 }
            return Unmanaged<PolicyBox>.fromOpaque(context).takeUnretainedValue().policy.permits(ip) ? 1 : 0
        }, context)
        code = configure(handle, code, url: url, timeoutMilliseconds: remainingMilliseconds)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for line in requestHeaderLines(host: host, resuming: partial) { headerList = curl_slist_append(headerList, line) }
        if code == CURLE_OK, let headerList { code = ipx_curl_set_list(handle, CURLOPT_HTTPHEADER, headerList) }
        var resolveList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(resolveList) }
        for entry in settings.resolve { resolveList = curl_slist_append(resolveList, entry) }
        if code == CURLE_OK, let resolveList { code = ipx_curl_set_list(handle, CURLOPT_RESOLVE, resolveList) }
        guard code == CURLE_OK else { return .finished(.failure(.originFailure("cannot configure the transfer"))) }

        let outcome = await driver.perform(handle)
        withExtendedLifetime(policyBox) {}
        withExtendedLifetime(body) {}
        var status = 0
        var responseCode = 0
        if ipx_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &responseCode) == CURLE_OK { status = responseCode }
        // The array libcurl's thread wrote into: handed on as it is, no copy.
        let received = body.bytes
        let headers = FetchedSource.parseHeaderLines(transfer.pointee.headers.map { String(cString: $0) } ?? "")
        if Task.isCancelled {
            keepForResuming(received, status: status, headers: headers, partial: partial, url: url)
            throw CancellationError()
        }

        if transfer.pointee.address_refused != 0 && (outcome == CURLE_COULDNT_CONNECT || outcome == CURLE_ABORTED_BY_CALLBACK) {
            return .finished(.failure(.refused("its address is not allowed")))
        }
        if transfer.pointee.body_too_large != 0 || outcome == CURLE_FILESIZE_EXCEEDED {
            return .finished(.failure(.tooLarge(limit: settings.maxSourceBytes)))
        }
        switch outcome {
        case CURLE_OK: break
        case CURLE_OPERATION_TIMEDOUT: return .finished(.failure(.timeout))
        case CURLE_UNSUPPORTED_PROTOCOL: return .finished(.failure(.refused("redirected to a scheme other than http or https")))
        case CURLE_COULDNT_RESOLVE_HOST: return .finished(.failure(.originFailure("cannot resolve the source host")))
        case CURLE_COULDNT_CONNECT: return .finished(.failure(.originUnreachable))
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR:
            return .finished(.failure(.originFailure("TLS handshake with the origin failed")))
        default: return .finished(.failure(.originFailure("transfer failed")))
        }
        if [301, 302, 303, 307, 308].contains(status) {
            var location: UnsafeMutablePointer<CChar>?
            if ipx_curl_get_string(handle, CURLINFO_REDIRECT_URL, &location) == CURLE_OK, let location {
                return .redirect(to: String(cString: location))
            }
        }
        if status == 206, let partial {
            let fields = Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            guard let whole = partial.joined(with: received, contentRange: fields["content-range"]) else {
                return .finished(.failure(.originFailure("origin answered a range that does not continue the download")))
            }
            return .finished(.success(FetchedSource(body: whole, headers: headers, status: 200, resumedFrom: partial.bytes.count)))
        }
        switch status {
        case 200...299: break
        case 304 where validators != nil: break
        case 404, 410: return .finished(.failure(.notFound(status: status)))
        case 401 where s3 != nil, 403 where s3 != nil: return .finished(.failure(.accessDenied))
        case 500...599: return .finished(.failure(.originServerError(status: status)))
        default: return .finished(.failure(.originFailure("origin answered \(status)")))
        }
        return .finished(.success(FetchedSource(body: received, headers: headers, status: status)))
    }

    /// Keeps what an aborted hop received when the origin allows resuming it: a whole-body answer (200),
    /// or the continuation (206) of an earlier beginning.
    private func keepForResuming(
        _ bytes: [UInt8], status: Int, headers: [(name: String, value: String)], partial: PartialDownloads.Partial?, url: String
    ) {
        let fields = Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        switch status {
        case 200:
            partials.keep(bytes, of: url, headers: fields)
        case 206:
            guard let partial, let range = ContentRange(parsing: fields["content-range"]), range.first == partial.bytes.count
            else { return }
            partials.keep(partial.bytes + bytes, of: url, headers: fields)
        default:
            if let partial { partials.restore(partial, of: url) }
        }
    }

    /// The hop marker, per-origin headers, conditional headers from the stored copy's validators, and
    /// the range of the rest when resuming.
    private func requestHeaderLines(host: String, resuming partial: PartialDownloads.Partial?) -> [String] {
        var lines = ["\(OriginFetcher.hopHeader): 1"] + extraHeaderLines
        if let s3 {
            lines += s3.headerLines
        } else {
            lines += settings.originHeaders.filter { HostAllowlist(patterns: [$0.hostPattern]).allows(host) }.map(\.line)
        }
        if let partial {
            lines.append("Range: bytes=\(partial.bytes.count)-")
            lines.append("If-Range: \(partial.validator)")
        }
        guard let validators else { return lines }
        if let etag = validators.etag { lines.append("If-None-Match: \(etag)") }
        if let lastModified = validators.lastModified { lines.append("If-Modified-Since: \(lastModified)") }
        return lines
    }

    private func configure(_ handle: UnsafeMutableRawPointer, _ previous: CURLcode, url: String, timeoutMilliseconds: Int) -> CURLcode {
        var code = previous
        func set(_ option: CURLoption, _ value: Int) { if code == CURLE_OK { code = ipx_curl_set_long(handle, option, value) } }
        func set(_ option: CURLoption, _ value: String) { if code == CURLE_OK { code = ipx_curl_set_string(handle, option, value) } }
        set(CURLOPT_URL, url)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, 0)  // redirects are followed in `perform`, one judged hop at a time
        set(CURLOPT_CONNECTTIMEOUT_MS, settings.connectTimeoutMilliseconds)
        set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_USERAGENT, settings.userAgent)
        set(CURLOPT_PROXY, settings.proxy)  // "" ignores http_proxy and friends from the environment
        if let s3, let provider = s3.signingProvider {
            // libcurl signs the request itself (AWS Signature V4); the credentials never leave this process.
            set(CURLOPT_AWS_SIGV4, provider)
            set(CURLOPT_USERPWD, s3.signingCredentials)
        }
        if code == CURLE_OK { code = ipx_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(settings.maxSourceBytes)) }
        return code
    }
}
