import Glibc
import Loopback
import Testing

/// The sandbox's port is held from the moment the app names it until the child listens: nobody
/// else may take it in between (the e2e run once lost `closed_at_launch` to that gap), but the child,
/// which binds with SO_REUSEADDR as Hummingbird does, may.
@Suite struct ReservedPortTests {
    @Test func anotherProgramCannotBindAHeldPort() throws {
        let held = try #require(ReservedPort())
        let other = try #require(Listener(port: held.port, reuseAddress: false))
        #expect(other.bound == false)
        #expect(other.error == EADDRINUSE)
    }

    @Test func theChildCanListenOnItsHeldPortAndKeepsItOnceReleased() throws {
        let held = try #require(ReservedPort())
        let child = try #require(Listener(port: held.port, reuseAddress: true))
        #expect(child.bound)
        #expect(listen(child.fd, 4) == 0)
        held.release()
        // Listening, the child holds the port itself: a second listener is refused.
        let late = try #require(Listener(port: held.port, reuseAddress: true))
        #expect(late.bound == false)
    }

    /// Tried three times: other tests in this process bind port 0 meanwhile, and the system may hand one of
    /// them the port just let go (soak: once in nine runs, on a loaded machine). A port never let go would
    /// stay taken all three times.
    @Test func aReleasedPortIsFreeAgain() throws {
        var bound: [Bool] = []
        for _ in 0..<3 where !bound.contains(true) {
            let held = try #require(ReservedPort())
            held.release()
            bound.append(try #require(Listener(port: held.port, reuseAddress: false)).bound)
        }
        #expect(bound.contains(true), "a released port was taken each time: \(bound)")
    }

    /// A socket bound (or not) to 127.0.0.1:port, closed with this value.
    private final class Listener {
        let fd: Int32
        let bound: Bool
        let error: Int32

        init?(port: Int, reuseAddress: Bool) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return nil }
            self.fd = fd
            var on: Int32 = 1
            if reuseAddress { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 }
            }
            error = bound ? 0 : errno
            self.bound = bound
        }

        deinit { close(fd) }
    }
}
