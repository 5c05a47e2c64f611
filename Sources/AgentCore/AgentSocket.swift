import CAgentAnswer
import CSocket
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import OAuthCore
import Synchronization

/// The agent's Unix socket, where oidc-agent's clients and Latchkey's own commands
/// ask for tokens (`OIDCAgentChannel` says how): in a directory only its owner may
/// enter (0700), itself 0600, and every connection's peer checked to be this
/// user (`SO_PEERCRED`) before a byte of it is read. Who connected is identified
/// then, at once (`Caller`), on the connection's own thread, before its request is read; and every
/// byte of the request must be written by that process (`SO_PASSCRED`): a child it handed the
/// connection to, after which it may exec an allowed program, gets nothing.
///
/// Each connection has a thread of its own (kept for the next once idle: `WorkerThreads`),
/// which waits for the whole request at most `requestTimeout` seconds in all, then for the answer: a client that goes
/// quiet or away costs one thread for that long and changes nothing. One process
/// holds at most `mostPerProcess` connections at once, all of them `mostConnections`.
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

    /// One connection: its peer, and who that is (or why it cannot be told), as seen when it connected.
    public struct Connection: Sendable {
        public let peer: Peer
        public let caller: Result<Caller, AgentRefusal>
        /// Signalled when the caller closes its end while its request is under way.
        public let hangUp = HangUp()
    }

    public typealias Handler = @Sendable (Connection, AgentRequest) async -> Result<AgentToken, AgentRefusal>

    public let path: String
    private let handler: Handler
    private let logger: Logger
    private let own: OwnExecutable
    /// The listening descriptor and the socket file it made (so that only that file is ever removed).
    private let listener = Mutex<(fd: Int32, file: FileStamp?)>((-1, nil))
    private let stopping = Atomic<Bool>(false)
    private let open = Mutex(OpenCounts())
    private let workers = WorkerThreads(most: AgentSocket.mostConnections)

    public static let mostConnections = 256
    public static let mostPerProcess = 16
    public static let mostPerProgram = 64
    /// Seconds one connection may last in all, request, answer and what follows: the person has two
    /// minutes to answer, a provider a minute per request, and a client that trickles bytes none more.
    public static let connectionLifetime = Int(LATCHKEY_AGENT_CONNECTION_LIFETIME)
    /// Seconds a client has to send its whole request.
    public static let requestTimeout = 10

    public init(path: String, logger: Logger, own: OwnExecutable = .current, handler: @escaping Handler) {
        self.path = path
        self.logger = logger
        self.own = own
        self.handler = handler
    }

    /// `$XDG_RUNTIME_DIR/latchkey/agent.sock`; nil without a runtime directory (which only the
    /// session's user may enter: no other place is as private).
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return runtime + "/latchkey/agent.sock"
    }

    /// The variable naming the socket an agent reached elsewhere answers on: the desktop's,
    /// forwarded to this machine with `ssh -R` (as SSH_AUTH_SOCK names ssh-agent's).
    public static let forwardedVariable = "LATCHKEY_AGENT_SOCK"

    /// Where Latchkey's commands ask: `LATCHKEY_AGENT_SOCK` when set (an absolute path), else this session's
    /// socket; with whether it was forwarded (then no agent there is said, not worked around).
    public static func clientPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> (path: String, forwarded: Bool)? {
        if let forwarded = environment[forwardedVariable], forwarded.hasPrefix("/") { return (forwarded, true) }
        return defaultPath(environment: environment).map { ($0, false) }
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
        // Every byte stamped with the process that wrote it, from the first connection on.
        guard bound == 0, chmod(path, 0o600) == 0, csocket_pass_credentials(fd) == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw AgentRefusal(.failed, "The agent cannot listen at \(path) (\(reason)).")
        }
        listener.withLock { $0 = (fd, FileStamp(of: path)) }
        guard BlockingWork.startThread({ [self] in acceptLoop(fd) }) else {
            stop()
            throw AgentRefusal(.failed, "The agent could not start a thread to listen on.")
        }
        logger.info("Agent listening", metadata: ["socket": "\(path)"])
    }

    /// Stops listening and removes the socket file it made (and nothing else); connections under way finish.
    public func stop() {
        let (fd, file) = listener.withLock { current in
            defer { current = (-1, nil) }
            return current
        }
        guard fd >= 0 else { return }
        stopping.store(true, ordering: .relaxed)
        if let file, FileStamp(of: path) == file { unlink(path) }
        // Wakes the accepting thread, which closes the descriptor itself: closed here, its number
        // could be taken by another socket before that thread's next accept, which would then serve it.
        shutdown(fd, Int32(SHUT_RDWR))
    }

    // MARK: Serving

    private func acceptLoop(_ fd: Int32) {
        while true {
            let connection = csocket_accept_cloexec(fd)
            guard connection >= 0 else {
                if stopping.load(ordering: .relaxed) {
                    close(fd)
                    return
                }
                // Out of descriptors or memory, or a connection gone before it was taken: the next try a moment later.
                if errno != EINTR, errno != ECONNABORTED { usleep(100_000) }
                continue
            }
            guard let peer = Self.peer(of: connection), peer.uid == getuid() else {
                let uid = Self.peer(of: connection).map { "\($0.uid)" } ?? "unknown"
                logger.notice("Refused a connection from another user", metadata: ["uid": "\(uid)"])
                close(connection)
                continue
            }
            // Slots per process, and per program (what its executable is called; any program can make
            // processes), so that one caller cannot take them all.
            let program = Identification.key(of: peer.pid, own: own)
            guard admit(peer.pid, program) else {
                logger.notice("Too many connections at once; one was refused", metadata: ["pid": "\(peer.pid)"])
                // Said, not only closed: a client must never take a busy agent for none (and sign in itself).
                Self.sayBusy(connection)
                close(connection)
                continue
            }
            // Who connected: first thing on the connection's own thread (never this one, which a caller
            // whose /proc cannot be read at once must not stall), before a byte of its request is read.
            let started = workers.run { [self] in
                let own = self.own
                let caller =
                    Identification.blocking(for: program) { Self.identify(peer, holding: connection, own: own) } ?? .failure(Self.notInTime)
                serve(connection, Connection(peer: peer, caller: caller), program: program)
                close(connection)
                release(peer.pid, program)
            }
            if !started {
                Self.sayBusy(connection)
                close(connection)
                release(peer.pid, program)
            }
        }
    }

    private func admit(_ pid: Int32, _ program: String) -> Bool {
        open.withLock { counts in
            guard counts.total < Self.mostConnections, counts.processes[pid, default: 0] < Self.mostPerProcess,
                counts.programs[program, default: 0] < Self.mostPerProgram
            else { return false }
            counts.total += 1
            counts.processes[pid, default: 0] += 1
            counts.programs[program, default: 0] += 1
            return true
        }
    }

    private func release(_ pid: Int32, _ program: String) {
        open.withLock { counts in
            counts.total -= 1
            counts.processes[pid, default: 1] -= 1
            if counts.processes[pid] == 0 { counts.processes[pid] = nil }
            counts.programs[program, default: 1] -= 1
            if counts.programs[program] == 0 { counts.programs[program] = nil }
        }
    }

    private func serve(_ fd: Int32, _ connection: Connection, program: String) {
        var timeout = timeval(tv_sec: Self.requestTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(Self.requestTimeout) * 1_000_000_000
        var channel = OIDCAgentChannel()
        var chunk = [UInt8](repeating: 0, count: 4096)
        var strangerWrote = false
        // One deadline for the whole request, however it trickles in.
        while Self.readable(fd, before: deadline) {
            var sender: Int32 = 0
            let n = chunk.withUnsafeMutableBytes { csocket_recv_from_sender(fd, $0.baseAddress, UInt($0.count), &sender) }
            if n < 0, errno == EINTR { continue }
            // Gone: nothing to answer, nothing changed.
            if n < 0 { return }
            // Written by another process than the one that connected: a child it handed the connection to
            // (after which the parent may have become an allowed program). The request is answered with
            // a refusal, whoever goes on to write.
            if n > 0, sender != connection.peer.pid { strangerWrote = true }
            let step = n == 0 ? channel.ended() : channel.received(chunk[0..<n])
            switch step {
            case .needMore:
                if n == 0 { return }
            case .send(let bytes):
                guard Self.writeAll(fd, bytes) else { return }
            case .request(let request):
                var answer: Result<AgentToken, AgentRefusal> =
                    strangerWrote
                    ? .failure(Self.strangerRefusal)
                    : request.flatMap { wait(for: $0, from: connection, on: fd) }
                // The token goes only to a connection the process that made it still holds, close-on-exec:
                // one that exec'd another program since (then the flag is gone, or the descriptor with it)
                // while a child it forked reads the answer gets nothing. A process that hides its
                // descriptors (non-dumpable) cannot be looked at, and is asked about as one that hides.
                if case .success = answer, Identification.blocking(for: program, { Self.stillHolds(fd, connection) }) != true {
                    answer = .failure(Self.handedOnRefusal)
                    logger.notice("The process that connected no longer holds its connection; no token given")
                }
                if strangerWrote { logger.notice("A request written by another process than the one that connected was refused") }
                // A caller that hung up (through ssh, a half-close: it may still read) learns nothing of a
                // refusal: whether its question was taken back or there was nothing to ask about would
                // tell, at once and unseen, which names the agent knows.
                if case .failure = answer, connection.hangUp.happened {
                    logger.notice("The caller hung up before its answer; no refusal is written")
                    return
                }
                let json: String
                switch answer {
                case .success(let token): json = OIDCAgentMessage.success(token)
                case .failure(let refusal): json = OIDCAgentMessage.failure(refusal)
                }
                let reply = channel.reply(json)
                guard !reply.isEmpty, Self.writeAll(fd, reply) else { return }
                Self.drain(fd)
                return
            }
        }
    }

    /// The handler's answer, waited for on this connection's own thread, which watches the connection
    /// meanwhile with the same poll(2): the moment the caller hangs up, its question is taken back.
    private func wait(for request: AgentRequest, from connection: Connection, on fd: Int32) -> Result<AgentToken, AgentRefusal> {
        let handler = self.handler
        let pending = SyncBridge.start { await handler(connection, request) }
        // Closed, not half-closed: a script may shut its sending side down and still wait for the answer.
        // Through ssh, though, a program that ended on the far side is only a half-close here (ssh
        // passes its end on as one, and waits for the answer on the channel): that is the hang-up.
        let halfClosed: Int16 = 0x2000  // POLLRDHUP, which the Glibc module does not import
        let remote = (try? connection.caller.get())?.program.remoteHost != nil
        let gone = Int16(POLLHUP | POLLERR) | (remote ? halfClosed : 0)
        let deadline = DispatchTime.now() + .seconds(Self.connectionLifetime)
        var watching = true
        while true {
            let watched = watching && !connection.hangUp.happened ? fd : nil
            switch pending.wait(watching: watched, for: remote ? halfClosed : 0, until: deadline) {
            case .finished(let answer):
                return answer
            case .descriptor(let revents):
                // Reported once: a hang-up stays, and is not watched for again.
                watching = false
                if revents & gone != 0 { connection.hangUp.signal() }
            case .timedOut:
                // Past the connection's lifetime: its question is taken back, and the answer is a refusal.
                connection.hangUp.signal()
                return .failure(AgentRefusal(.failed, "The agent gave up on this request after \(Self.connectionLifetime / 60) minutes."))
            }
        }
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
        // One second in all, however the bytes trickle in (not a second per read).
        let deadline = DispatchTime.now().uptimeNanoseconds + 1_000_000_000
        var chunk = [UInt8](repeating: 0, count: 65536)
        var total = 0
        while total < 1 << 20, readable(fd, before: deadline) {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n < 0, errno == EINTR || errno == EAGAIN { continue }
            guard n > 0 else { return }
            total += n
        }
    }

    /// Whether `fd` has something to read (or has ended) before `deadline` (uptime nanoseconds).
    static func readable(_ fd: Int32, before deadline: UInt64) -> Bool {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1)
            if ready < 0, errno == EINTR { continue }
            return ready > 0
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
