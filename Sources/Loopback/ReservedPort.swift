#if canImport(Glibc)
    import Glibc
#endif

/// A port on 127.0.0.1 held for a child that will listen on it, from the moment its number is
/// known until the child listens.
///
/// Picking a free port, closing it and letting the child bind it later leaves a gap in which any
/// other program may take the port (a parallel test's server did, and the child's bind failed with
/// "Address already in use"). Held here instead: a socket bound to the port with `SO_REUSEADDR` and
/// never listening. While it is bound, no `bind(0)` and no outgoing connection is given the port,
/// and an explicit bind without `SO_REUSEADDR` is refused. A listener that sets `SO_REUSEADDR`
/// itself may bind it, since the held socket is not listening: the child (Hummingbird's servers
/// do), and, should one try this very port, any other such program, whose listen then keeps the
/// child from listening (it says so, as before). Released once the child listens.
///
/// The descriptor is close-on-exec: a spawned child never inherits the hold.
public final class ReservedPort: @unchecked Sendable {
    public let port: Int
    /// -1 once released. Touched only by `init`, `release` and `deinit`, which the owner orders.
    private var descriptor: Int32

    /// A port nobody else holds, on 127.0.0.1; nil when the system has none (or no socket).
    public init?() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var on: Int32 = 1
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound =
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
            && withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
        guard bound else {
            close(fd)
            return nil
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Lets the port go: once its listener listens (it then holds the port itself), or when none will.
    public func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
