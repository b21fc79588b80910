import Hummingbird
import ImageCore
import ProxyEngine

extension Response {
    /// A one-line `text/plain` response.
    static func plainText(_ message: String, status: HTTPResponse.Status, cacheControl: String = "no-store") -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = cacheControl
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}
