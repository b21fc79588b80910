import CCurlShim

/// The body of one download, written by libcurl's thread straight into the array the source is then kept
/// in: allocated at the response's declared length (Content-Length, within the source limit) at its first
/// bytes, so a body of known length is copied once, from libcurl's receive buffer, and never moved; a body
/// without a declared length grows as an array does.
///
/// Written only on libcurl's thread while the transfer runs, and read only after
/// ``CurlMultiDriver/perform(_:)`` returned (the driver's continuation orders the two).
final class DownloadedBody: @unchecked Sendable {
    /// The bytes received so far.
    private(set) var bytes: [UInt8] = []
    /// The most it may reserve at once (the source limit); a declared length is never trusted beyond it.
    private let limit: Int

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// The `ipx_body_sink` to hand a transfer, with ``context`` as its context.
    static let sink: ipx_body_sink = { context, data, length, declared in
        guard let context else { return 0 }
        let body = Unmanaged<DownloadedBody>.fromOpaque(context).takeUnretainedValue()
        body.append(UnsafeBufferPointer(start: data, count: length), declared: declared)
        return length
    }

    /// What ``sink`` is called with; valid while this body is alive (the transfer's caller keeps it).
    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private func append(_ data: UnsafeBufferPointer<UInt8>, declared: Int64) {
        if bytes.isEmpty, declared > 0 {
            bytes.reserveCapacity(Int(min(declared, Int64(limit))))
        }
        bytes.append(contentsOf: data)
    }
}
