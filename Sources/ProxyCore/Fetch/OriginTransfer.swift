import CCurlShim
import Foundation

/// One blocking libcurl easy transfer, configured from ``OriginFetcher/Settings``.
struct OriginTransfer {
    let url: String
    let settings: OriginFetcher.Settings
    let policyBox: PolicyBox
    /// Validators of a stored copy: the request becomes conditional and a 304 is a success.
    var validators: OriginValidators? = nil

    /// Runs the transfer on the calling thread.
    func perform() -> Result<FetchedSource, FetchError> {
        guard let handle = curl_easy_init() else { return .failure(.originFailure("cannot start a transfer")) }
        defer { curl_easy_cleanup(handle) }
        guard let transfer = ipx_transfer_new(settings.maxSourceBytes) else {
            return .failure(.originFailure("out of memory"))
        }
        defer { ipx_transfer_free(transfer) }

        let context = Unmanaged.passUnretained(policyBox).toOpaque()
        var code = ipx_transfer_attach(handle, transfer, { context, family, address in
            guard let context, let address, let ip = IPAddress(socketAddress: address, family: family) else { return 0 }
            return Unmanaged<PolicyBox>.fromOpaque(context).takeUnretainedValue().policy.permits(ip) ? 1 : 0
        }, context)
        code = configure(handle, code)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for line in requestHeaderLines() { headerList = curl_slist_append(headerList, line) }
        if code == CURLE_OK, let headerList { code = ipx_curl_set_list(handle, CURLOPT_HTTPHEADER, headerList) }
        guard code == CURLE_OK else { return .failure(.originFailure("cannot configure the transfer")) }

        let outcome = withExtendedLifetime(policyBox) { curl_easy_perform(handle) }
        var status = 0
        var responseCode = 0
        if ipx_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &responseCode) == CURLE_OK { status = responseCode }

        if transfer.pointee.address_refused != 0 && outcome == CURLE_COULDNT_CONNECT {
            return .failure(.refused("its address is not allowed"))
        }
        if transfer.pointee.body_too_large != 0 || outcome == CURLE_FILESIZE_EXCEEDED {
            return .failure(.tooLarge(limit: settings.maxSourceBytes))
        }
        switch outcome {
        case CURLE_OK: break
        case CURLE_OPERATION_TIMEDOUT: return .failure(.timeout)
        case CURLE_UNSUPPORTED_PROTOCOL: return .failure(.refused("redirected to a scheme other than http or https"))
        case CURLE_TOO_MANY_REDIRECTS: return .failure(.originFailure("more than \(settings.maxRedirects) redirects"))
        case CURLE_COULDNT_RESOLVE_HOST: return .failure(.originFailure("cannot resolve the source host"))
        case CURLE_COULDNT_CONNECT: return .failure(.originUnreachable)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR:
            return .failure(.originFailure("TLS handshake with the origin failed"))
        default: return .failure(.originFailure("transfer failed"))
        }
        if !settings.allowlist.allowsAll {
            var effective: UnsafeMutablePointer<CChar>?
            let finalURL = ipx_curl_get_string(handle, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK
                ? effective.map { String(cString: $0) } : nil
            let finalHost = finalURL.flatMap { URLComponents(string: $0)?.host?.lowercased() } ?? ""
            guard settings.allowlist.allows(finalHost) else { return .failure(.refused("redirected to a host that is not allowed")) }
        }
        switch status {
        case 200...299: break
        case 304 where validators != nil: break
        case 404, 410: return .failure(.notFound(status: status))
        case 500...599: return .failure(.originServerError(status: status))
        default: return .failure(.originFailure("origin answered \(status)"))
        }
        let body = transfer.pointee.body_length == 0 ? [] :
            Array(UnsafeBufferPointer(start: transfer.pointee.body, count: transfer.pointee.body_length))
        let headerText = transfer.pointee.headers.map { String(cString: $0) } ?? ""
        return .success(FetchedSource(body: body, headers: FetchedSource.parseHeaderLines(headerText), status: status))
    }

    /// Conditional request headers from the stored copy's validators.
    private func requestHeaderLines() -> [String] {
        var lines = ["\(OriginFetcher.hopHeader): 1"]
        guard let validators else { return lines }
        if let etag = validators.etag { lines.append("If-None-Match: \(etag)") }
        if let lastModified = validators.lastModified { lines.append("If-Modified-Since: \(lastModified)") }
        return lines
    }

    private func configure(_ handle: UnsafeMutableRawPointer, _ previous: CURLcode) -> CURLcode {
        var code = previous
        func set(_ option: CURLoption, _ value: Int) { if code == CURLE_OK { code = ipx_curl_set_long(handle, option, value) } }
        func set(_ option: CURLoption, _ value: String) { if code == CURLE_OK { code = ipx_curl_set_string(handle, option, value) } }
        set(CURLOPT_URL, url)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, 1)
        set(CURLOPT_MAXREDIRS, settings.maxRedirects)
        set(CURLOPT_CONNECTTIMEOUT_MS, settings.connectTimeoutMilliseconds)
        set(CURLOPT_TIMEOUT_MS, settings.timeoutMilliseconds)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_USERAGENT, settings.userAgent)
        set(CURLOPT_PROXY, "")  // ignore http_proxy and friends from the environment
        if code == CURLE_OK { code = ipx_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(settings.maxSourceBytes)) }
        return code
    }
}
