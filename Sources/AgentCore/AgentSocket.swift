import Dispatch
import FoundationEssentials
import Glibc
import Logging
import OAuthCore
import Synchronization

/// The agent's Unix socket, where oidc-agent's clients and Latchkey's own commands
/// ask for tokens (`OIDCAgentChannel` says how): in a directory only its owner may
/// enter (0700), itself 0600, and every connection's peer checked to be this
/// user (`SO_PEERCRED`) before a byte of it is read.
///
/// Each connection has a thread of its own, which waits for the whole request at
/// most `readTimeout` seconds, then for the answer: a client that goes quiet or
/// away costs one thread for that long and changes nothing.
public final class AgentSocket: Sendable {
    /// The process at the other end, as the kernel saw it connect.
    public struct Peer: Sendable, Equatable {
        public let pid: Int32
        public let uid: UInt32

        public init(pid: Int32, uid: UInt32) {
            self.pid = pid
            self.uid = uid
        }
    }

    public typealias Handler = @Sendable (Peer, AgentRequest) async -> Result<AgentToken, AgentRefusal>

    public let path: String
    private let handler: Handler
    private let logger: Logger
    private let listener = Mutex<Int32>(-1)
    private let open = Atomic<Int>(0)

    /// Connections served at once; more wait in the kernel's backlog.
    public static let mostConnections = 256
    /// Seconds a client has to send its whole request.
    public static let readTimeout = 10

    public init(path: String, logger: Logger, handler: @escaping Handler) {
        self.path = path
        self.logger = logger
        self.handler = handler
    }

    /// `$XDG_RUNTIME_DIR/latchkey/agent.sock`; nil without a runtime directory (which only the
    /// session's user may enter: no other place is as private).
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return runtime + "/latchkey/agent.sock"
    }

    /// Whether an agent answers at `path` now.
    public static func isServed(at path: String) -> Bool {
        let fd = connectTo(path)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    /// A connected descriptor to the socket at `path`, or -1.
    public static func connectTo(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_un()
        guard Self.fill(&address, path) else {
            close(fd)
            return -1
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    /// Starts listening, and serving on threads of its own. Throws a sentence when another agent
    /// serves this socket already (this one then leaves it be) or the socket cannot be made.
    public func start() throws(AgentRefusal) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do { try PrivateFile.prepareDirectory(directory) } catch {
            throw AgentRefusal(.failed, "The agent's socket: \(error.sentence("cannot use"))")
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw AgentRefusal(.failed, "\(path) is there and is not a socket; the agent leaves it alone.")
            }
            guard !Self.isServed(at: path) else {
                throw AgentRefusal(.failed, "Another Latchkey agent answers at \(path) already; this one leaves it be.")
            }
            unlink(path)  // left by an agent that ended without cleaning up
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        guard fd >= 0, Self.fill(&address, path) else { throw AgentRefusal(.failed, "The agent's socket path is too long: \(path)") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw AgentRefusal(.failed, "The agent cannot listen at \(path) (\(reason)).")
        }
        listener.withLock { $0 = fd }
        BlockingWork.detachThread { [self] in acceptLoop(fd) }
        logger.info("Agent listening", metadata: ["socket": "\(path)"])
    }

    /// Stops listening and removes the socket; connections under way finish.
    public func stop() {
        let fd = listener.withLock { fd in
            defer { fd = -1 }
            return fd
        }
        guard fd >= 0 else { return }
        unlink(path)
        // Wakes the accepting thread, which closes the descriptor itself: closed here, its number
        // could be taken by another socket before that thread's next accept, which would then serve it.
        shutdown(fd, Int32(SHUT_RDWR))
    }

    // MARK: Serving

    private func acceptLoop(_ fd: Int32) {
        while true {
            let connection = accept(fd, nil, nil)
            if connection >= 0 { _ = fcntl(connection, F_SETFD, FD_CLOEXEC) }
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE {
                    usleep(100_000)  // out of descriptors: the next try after connections have ended
                    continue
                }
                close(fd)  // stopped (see `stop`)
                return
            }
            guard let peer = Self.peer(of: connection), peer.uid == getuid() else {
                let uid = Self.peer(of: connection).map { "\($0.uid)" } ?? "unknown"
                logger.notice("Refused a connection from another user", metadata: ["uid": "\(uid)"])
                close(connection)
                continue
            }
            guard open.add(1, ordering: .relaxed).newValue <= Self.mostConnections else {
                open.subtract(1, ordering: .relaxed)
                logger.notice("Too many connections at once; one was closed unanswered")
                close(connection)
                continue
            }
            BlockingWork.detachThread { [self] in
                serve(connection, peer)
                close(connection)
                open.subtract(1, ordering: .relaxed)
            }
        }
    }

    private func serve(_ fd: Int32, _ peer: Peer) {
        var timeout = timeval(tv_sec: Self.readTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var channel = OIDCAgentChannel()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            // Gone quiet past the limit, or gone: nothing to answer, nothing changed.
            if n < 0 { return }
            let step = n == 0 ? channel.ended() : channel.received(chunk[0..<n])
            switch step {
            case .needMore:
                if n == 0 { return }
            case .send(let bytes):
                guard Self.writeAll(fd, bytes) else { return }
            case .request(let request):
                let answer = request.flatMap { wait(for: $0, from: peer) }
                let json: String
                switch answer {
                case .success(let token): json = OIDCAgentMessage.success(token)
                case .failure(let refusal): json = OIDCAgentMessage.failure(refusal)
                }
                guard Self.writeAll(fd, channel.reply(json)) else { return }
                Self.drain(fd)
                return
            }
        }
    }

    /// The handler's answer, waited for on this connection's own thread.
    private func wait(for request: AgentRequest, from peer: Peer) -> Result<AgentToken, AgentRefusal> {
        let answer = Mutex<Result<AgentToken, AgentRefusal>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let handler = self.handler
        Task.detached {
            let result = await handler(peer, request)
            answer.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 } ?? .failure(AgentRefusal(.failed, "The agent could not answer."))
    }

    /// All of `bytes` in one write where the kernel takes them so (a client reads what one wake-up brings).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// After the answer: what the client still sends (an oversized request's rest) is read and
    /// dropped until it closes, at most a second and a MiB, so that closing with unread bytes does
    /// not reset the connection before the client has read the answer.
    static func drain(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_WR))
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var chunk = [UInt8](repeating: 0, count: 65536)
        var total = 0
        while total < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return }
            total += n
        }
    }

    static func peer(of fd: Int32) -> Peer? {
        // struct ucred: pid, uid, gid, each 32 bits.
        var credentials = [UInt32](repeating: 0, count: 3)
        var length = socklen_t(12)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, length == 12 else { return nil }
        return Peer(pid: Int32(bitPattern: credentials[0]), uid: credentials[1])
    }

    private static func fill(_ address: inout sockaddr_un, _ path: String) -> Bool {
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return true
    }
}
