import CCurlShim
import Foundation

/// One blocking libcurl easy transfer, configured from ``OriginFetcher/Settings``.
struct OriginTransfer {
    let url: String
    let settings: OriginFetcher.Settings
    let policyBox: PolicyBox
    /// Validators of a stored copy: the request becomes conditional and a 304 is a success.
    var validators: OriginValidators? = nil

    /// How one request of the chain ended.
    private enum Hop {
        case finished(Result<FetchedSource, FetchError>)
        case redirect(to: String)
    }

    /// Runs the transfer on the calling thread, following redirects itself (at most `maxRedirects`,
    /// http/https only, allowlist and per-origin headers judged again for every host).
    func perform() -> Result<FetchedSource, FetchError> {
        let deadline = ContinuousClock.now + .milliseconds(settings.timeoutMilliseconds)
        var current = url
        for hop in 0...settings.maxRedirects {
            guard let components = URLComponents(string: current), let scheme = components.scheme?.lowercased(),
                let host = components.host?.lowercased()
            else { return .failure(.originFailure("invalid redirect")) }
            guard scheme == "http" || scheme == "https" else {
                return .failure(.refused("redirected to a scheme other than http or https"))
            }
            guard settings.allowlist.allows(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) else {
                return .failure(.refused(hop == 0 ? "its host is not allowed" : "redirected to a host that is not allowed"))
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return .failure(.timeout) }
            switch performOnce(current, host: host, remainingMilliseconds: max(1, Int(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))) {
            case .finished(let result): return result
            case .redirect(let next): current = next
            }
        }
        return .failure(.originFailure("more than \(settings.maxRedirects) redirects"))
    }

    private func performOnce(_ url: String, host: String, remainingMilliseconds: Int) -> Hop {
        guard let handle = curl_easy_init() else { return .finished(.failure(.originFailure("cannot start a transfer"))) }
        defer { curl_easy_cleanup(handle) }
        guard let transfer = ipx_transfer_new(settings.maxSourceBytes) else {
            return .finished(.failure(.originFailure("out of memory")))
        }
        defer { ipx_transfer_free(transfer) }

        let context = Unmanaged.passUnretained(policyBox).toOpaque()
        var code = ipx_transfer_attach(handle, transfer, { context, family, address in
            guard let context, let address, let ip = IPAddress(socketAddress: address, family: family) else { return 0 }
            return Unmanaged<PolicyBox>.fromOpaque(context).takeUnretainedValue().policy.permits(ip) ? 1 : 0
        }, context)
        code = configure(handle, code, url: url, timeoutMilliseconds: remainingMilliseconds)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for line in requestHeaderLines(host: host) { headerList = curl_slist_append(headerList, line) }
        if code == CURLE_OK, let headerList { code = ipx_curl_set_list(handle, CURLOPT_HTTPHEADER, headerList) }
        var resolveList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(resolveList) }
        for entry in settings.resolve { resolveList = curl_slist_append(resolveList, entry) }
        if code == CURLE_OK, let resolveList { code = ipx_curl_set_list(handle, CURLOPT_RESOLVE, resolveList) }
        guard code == CURLE_OK else { return .finished(.failure(.originFailure("cannot configure the transfer"))) }

        let outcome = withExtendedLifetime(policyBox) { curl_easy_perform(handle) }
        var status = 0
        var responseCode = 0
        if ipx_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &responseCode) == CURLE_OK { status = responseCode }

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
        switch status {
        case 200...299: break
        case 304 where validators != nil: break
        case 404, 410: return .finished(.failure(.notFound(status: status)))
        case 500...599: return .finished(.failure(.originServerError(status: status)))
        default: return .finished(.failure(.originFailure("origin answered \(status)")))
        }
        let body = transfer.pointee.body_length == 0 ? [] :
            Array(UnsafeBufferPointer(start: transfer.pointee.body, count: transfer.pointee.body_length))
        let headerText = transfer.pointee.headers.map { String(cString: $0) } ?? ""
        return .finished(.success(FetchedSource(body: body, headers: FetchedSource.parseHeaderLines(headerText), status: status)))
    }

    /// Conditional request headers from the stored copy's validators.
    private func requestHeaderLines(host: String) -> [String] {
        var lines = ["\(OriginFetcher.hopHeader): 1"]
        lines += settings.originHeaders.filter { HostAllowlist(patterns: [$0.hostPattern]).allows(host) }.map(\.line)
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
        if code == CURLE_OK { code = ipx_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(settings.maxSourceBytes)) }
        return code
    }
}
