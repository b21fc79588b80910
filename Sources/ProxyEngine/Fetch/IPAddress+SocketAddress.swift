#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
import ImageCore
#endif

extension IPAddress {
    /// Reads the address out of a `sockaddr` of the given family (AF_INET or AF_INET6).
    init?(socketAddress address: UnsafePointer<sockaddr>, family: Int32) {
        switch family {
        case AF_INET:
            let raw = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            self = .v4(UInt32(bigEndian: raw))
        case AF_INET6:
            var bytes = [UInt8](repeating: 0, count: 16)
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { raw in
                    for index in 0..<16 { bytes[index] = raw[index] }
                }
            }
            self = .v6(bytes)
        default:
            return nil
        }
    }
}
