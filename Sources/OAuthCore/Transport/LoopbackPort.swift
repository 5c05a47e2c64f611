import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Ports on 127.0.0.1 for a browser's way back (RFC 8252 §7.3): one to register with a server
/// that compares redirect URIs exactly, and whether one registered earlier can still be had.
public enum LoopbackPort {
    /// A port no program listens on now, as the kernel picks one; nil if no socket could be had.
    public static func unused() -> Int? {
        bound(0)
    }

    /// Whether a listener could take `port` on 127.0.0.1 now (as libsoup would: address reuse on).
    public static func isFree(_ port: Int) -> Bool {
        (1...65535).contains(port) && bound(port) == port
    }

    /// Binds a socket to 127.0.0.1:`port` (0: any), closes it, and says which port it had.
    private static func bound(_ port: Int) -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard named else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// `redirectURI` (`http://127.0.0.1/callback`) at `port`.
    public static func redirectURI(_ redirectURI: URL, at port: Int) -> URL? {
        var components = URLComponents(url: redirectURI, resolvingAgainstBaseURL: false)
        components?.port = port
        return components?.url
    }
}
