import Foundation

#if canImport(Glibc)
import Glibc
@testable import ImageCore
@testable import ProxyEngine
#endif

/// A plain TCP connection to 127.0.0.1 for byte-level HTTP tests (slowloris, smuggling, huge headers).
final class RawConnection {
    private let descriptor: Int32

    init(port: Int, receiveTimeoutSeconds: Int = 5, receiveTimeoutMilliseconds: Int? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw ServiceProcessError.didNotStart("cannot connect")
        }
        let milliseconds = receiveTimeoutMilliseconds ?? receiveTimeoutSeconds * 1000
        var timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    /// Sends bytes; false when the peer has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Sends raw bytes; false when the peer has closed the connection.
    @discardableResult
    func send(bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Half-closes: no more bytes from this side (the server reads an end of input).
    func finishSending() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// The bytes received until `done` holds for them, the peer closes or the receive timeout passes.
    func receive(until done: ([UInt8]) -> Bool) -> (bytes: [UInt8], closed: Bool) {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return (data, count == 0) }
            data += buffer[0..<count]
            if done(data) { return (data, false) }
        }
    }

    /// Everything received until the peer closes or the receive timeout passes; `closed` says which.
    func receiveAll() -> (text: String, closed: Bool) {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 {
                data += buffer[0..<count]
            } else {
                return (String(decoding: data, as: UTF8.self), count == 0)
            }
        }
    }
}
