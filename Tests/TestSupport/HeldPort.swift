import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback port bound and never listened on: a connection there is refused, and no other
/// program can take the port while this is held. What is left of a server that went away.
/// Listening, it is another program that took the port (connections wait, never answered).
/// Released when the last reference goes, which may be right after its last use: keep it with
/// `withExtendedLifetime` for as long as the port must stay held.
public final class HeldPort: @unchecked Sendable {
    public let port: Int
    private let fd: Int32

    /// Binds 127.0.0.1:`port` (0: a free port the kernel picks); nil when another socket holds it.
    /// Without SO_REUSEADDR, so that no other socket can bind the port beside this one.
    public init?(_ port: Int = 0, listening: Bool = false) {
        guard let (fd, bound) = loopbackSocket(port, { bind($0, $1, $2) }) else { return nil }
        guard !listening || listen(fd, 1) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.port = bound
    }

    /// The address of a server that is not there: connections to it are refused.
    public var url: String { "http://127.0.0.1:\(port)" }

    deinit { close(fd) }
}

/// A connection to 127.0.0.1:`port` that sends nothing (as a browser's speculative one), closed
/// when released.
public final class IdleConnection: @unchecked Sendable {
    private let fd: Int32
    /// This end's port.
    public let localPort: Int

    public init?(port: Int) {
        guard let (fd, local) = loopbackSocket(port, { connect($0, $1, $2) }) else { return nil }
        self.fd = fd
        localPort = local
    }

    deinit { close(fd) }
}

/// A TCP socket (close-on-exec) that `step` bound or connected to 127.0.0.1:`port`, and its own port
/// then; nil, the socket closed, when a step failed.
private func loopbackSocket(_ port: Int, _ step: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> (Int32, Int)? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    let done = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { step(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard done, let local = localPort(fd) else {
        close(fd)
        return nil
    }
    return (fd, local)
}

/// The local port of socket `fd` (for a connected socket, its own end's); nil for a socket that is not IPv4.
private func localPort(_ fd: Int32) -> Int? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
    }
    return named && address.sin_family == sa_family_t(AF_INET) ? Int(UInt16(bigEndian: address.sin_port)) : nil
}

/// A second descriptor of the socket this process listens with on 127.0.0.1:`port`, as a child
/// holds one between its fork and its exec (close-on-exec closes it only at the exec): what a
/// process that starts programs on other threads cannot rule out at any moment. Closed when released.
public final class ListeningSocketCopy: @unchecked Sendable {
    private let fd: Int32

    /// nil when this process has no socket listening there.
    public init?(port: Int) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for name in names {
            guard let fd = Int32(name), Self.listens(fd, on: port) else { continue }
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            guard copy >= 0 else { return nil }
            self.fd = copy
            return
        }
        return nil
    }

    private static func listens(_ fd: Int32, on port: Int) -> Bool {
        var accepting: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &size) == 0 && accepting == 1 && localPort(fd) == port
    }

    deinit { close(fd) }
}
