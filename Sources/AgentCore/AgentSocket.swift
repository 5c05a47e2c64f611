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
/// then, at once (`Caller`), before its request is read; and every byte of the request must be
/// written by that process (`SO_PASSCRED`): a child it handed the connection to, after which it may
/// exec an allowed program, gets nothing.
///
/// One thread serves them all (`SocketLoop`, a poll(2) loop): each connection has at most
/// `requestTimeout` seconds in all for its whole request, then waits for the answer: a client that
/// goes quiet or away costs a slot for that long and changes nothing. One process holds at most
/// `mostPerProcess` connections at once, all of them `mostConnections`.
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
    let handler: Handler
    let logger: Logger
    let own: OwnExecutable
    /// The listening descriptor and the socket file it made (so that only that file is ever removed).
    private let listener = Mutex<(fd: Int32, file: FileStamp?)>((-1, nil))
    /// The loop serving the listener, once it runs: `stop` wakes it.
    private let serving = Mutex<SocketLoop?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let open = Mutex(OpenCounts())

    public static let mostConnections = 256
    public static let mostPerProcess = 16
    /// Half of all: no program takes every slot, and 64 processes of one program asking back to back (a
    /// connection closed by its client holds its slot until the loop sees the close) still fit.
    public static let mostPerProgram = 128
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

    /// Starts listening, and serving on a thread of its own (`SocketLoop`): on the socket a service manager
    /// passed (`AgentSocket+Activation`), else on one it makes. Throws a sentence when another agent
    /// serves this socket already (this one then leaves it be) or the socket cannot be made.
    public func start(environment: [String: String] = ProcessInfo.processInfo.environment) throws(AgentRefusal) {
        if let passed = Self.passedListener(for: path, environment: environment) {
            let fd = try passed.get()
            guard Self.adoptPassed(fd) else {
                throw AgentRefusal(.failed, "The agent cannot use the socket passed for \(path) (\(String(cString: strerror(errno)))).")
            }
            // Not its file to remove: the service manager's socket outlives this agent.
            return try serve(fd, file: nil, passed: true)
        }
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
        var address = sockaddr_un()
        guard Self.fill(&address, path) else { throw AgentRefusal(.failed, "The agent's socket path is too long: \(path)") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw AgentRefusal(.failed, "The agent has no socket to listen on (\(String(cString: strerror(errno)))).") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // Every byte stamped with the process that wrote it, from the first connection on.
        guard bound == 0, chmod(path, 0o600) == 0, csocket_pass_credentials(fd) == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw AgentRefusal(.failed, "The agent cannot listen at \(path) (\(reason)).")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        try serve(fd, file: FileStamp(of: path), passed: false)
    }

    /// Serves the listener `fd`; `file`: the socket file this agent made, removed when it stops.
    private func serve(_ fd: Int32, file: FileStamp?, passed: Bool) throws(AgentRefusal) {
        listener.withLock { $0 = (fd, file) }
        let loop = SocketLoop(socket: self, listener: fd)
        serving.withLock { $0 = loop }
        guard let loop, BlockingWork.startThread({ loop.run() }) else {
            stop()
            close(fd)
            throw AgentRefusal(.failed, "The agent could not set up its socket's loop (no eventfd, or no thread to run it on).")
        }
        logger.info("Agent listening", metadata: ["socket": "\(path)", "by": "\(passed ? "service manager" : "agent")"])
    }

    /// Stops listening and removes the socket file it made (and nothing else); connections under way finish.
    public func stop() {
        let (fd, file) = listener.withLock { current in
            defer { current = (-1, nil) }
            return current
        }
        guard fd >= 0 else { return }
        stopping.store(true, ordering: .releasing)
        if let file, FileStamp(of: path) == file { unlink(path) }
        // Wakes the loop, which takes the connections already waiting on the listener (a shutdown would
        // reset them, and their callers would hear nothing: make soak's SIGTERM did so), then closes the
        // descriptor itself: closed here, its number could be taken by another socket before the loop's
        // next accept, which would then serve it. Unlinked, the listener gets no new connection.
        serving.withLock { $0 }?.wakeUp()
    }

    // MARK: Serving

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Set by the loop when it ends: every connection it took answered and closed.
    let ended = Atomic(false)

    /// The loop's last word: every connection answered and closed. The socket lets go of it, which holds
    /// the socket in turn: kept, the two (and whatever the handler holds) outlived a stopped socket.
    func loopEnded() {
        ended.store(true, ordering: .releasing)
        serving.withLock { $0 = nil }
    }

    /// Returns once the loop has served every connection it took since `stop` (true), or after `most`.
    public func served(within most: Duration) async -> Bool {
        guard serving.withLock({ $0 }) != nil else { return true }
        let deadline = ContinuousClock.now + most
        while !ended.load(ordering: .acquiring), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return ended.load(ordering: .acquiring)
    }

    func admit(_ pid: Int32, _ program: String) -> Bool {
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

    func release(_ pid: Int32, _ program: String) {
        open.withLock { counts in
            counts.total -= 1
            counts.processes[pid, default: 1] -= 1
            if counts.processes[pid] == 0 { counts.processes[pid] = nil }
            counts.programs[program, default: 1] -= 1
            if counts.programs[program] == 0 { counts.programs[program] = nil }
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
