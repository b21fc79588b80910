import Foundation

/// A TCP listener on 127.0.0.1 (port 0) that never accepts: what would have connected waits in its queue.
public final class LoopbackListener {
    private var descriptor: Int32
    /// The port it listens on.
    public let port: Int

    /// Listens on 127.0.0.1 at a port the kernel picks.
    public init() throws {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, length) }
        }
        guard socketDescriptor >= 0, bound == 0, listen(socketDescriptor, 16) == 0 else {
            if socketDescriptor >= 0 { Glibc.close(socketDescriptor) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        }
        descriptor = socketDescriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Connections waiting to be accepted (each accepted and closed as it is counted).
    public func pendingConnections() -> Int {
        var count = 0
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, 0) > 0 {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { break }
            Glibc.close(connection)
            count += 1
        }
        return count
    }

    /// Stops listening.
    public func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
