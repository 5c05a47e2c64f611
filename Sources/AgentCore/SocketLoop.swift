import CSocket
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import OAuthCore
import Synchronization

/// The socket's one thread: a poll(2) loop over the listening socket and every connection, as
/// ssh-agent serves its socket. What may take long happens elsewhere and comes back as an event:
/// who connected is read on a thread of its own (`Identification`: a process stuck in the kernel
/// must not stall the loop), and the answer is the handler's task. Nothing here waits but poll.
///
/// A connection goes identifying → reading (its whole request within `requestTimeout`, the
/// oidc-agent handshake written back as it goes) → answering (only a hang-up is watched for, until
/// the handler answers or `connectionLifetime` passes) → writing (the answer, within
/// `requestTimeout`) → draining (what the client still sends, a second and a MiB at most) → closed.
final class SocketLoop: Sendable {
    enum Event: Sendable {
        case identified(UInt64, Result<Caller, AgentRefusal>)
        case answered(UInt64, Result<AgentToken, AgentRefusal>)
    }

    private let socket: AgentSocket
    private let listener: Int32
    /// Events from other threads, and the descriptor that wakes the loop for them.
    private let inbox = Mutex<[Event]>([])
    private let wake: Int32

    init?(socket: AgentSocket, listener: Int32) {
        let wake = csocket_eventfd()
        guard wake >= 0 else { return nil }
        self.socket = socket
        self.listener = listener
        self.wake = wake
    }

    deinit { close(wake) }

    /// A turn of the loop with nothing new: it looks at whether the socket is stopping.
    func wakeUp() {
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    func post(_ event: Event) {
        inbox.withLock { $0.append(event) }
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    /// Serves until the socket stops (`AgentSocket.stop` unlinks it and wakes the loop, which takes
    /// the connections still waiting) and the connections under way have finished.
    func run() {
        var state = LoopState(socket: socket, loop: self)
        var listening = true
        var acceptPausedUntil: UInt64 = 0
        while listening || !state.connections.isEmpty {
            let now = DispatchTime.now().uptimeNanoseconds
            var polled = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let acceptNow = listening && now >= acceptPausedUntil
            if acceptNow { polled.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
            let watched = state.watched()
            polled += watched.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
            var deadline = state.nextDeadline()
            if listening && !acceptNow { deadline = min(deadline ?? acceptPausedUntil, acceptPausedUntil) }
            let timeout = deadline.map { $0 > now ? Int32(min(($0 - now) / 1_000_000 + 1, 60_000)) : 0 } ?? -1
            let ready = poll(&polled, nfds_t(polled.count), timeout)
            if ready < 0, errno != EINTR { usleep(10_000) }
            if ready > 0 {
                if polled[0].revents != 0 { takeEvents(into: &state) }
                // Stopping: what waits on the listener is taken (and served), then it is no longer listened to.
                if listening, socket.isStopping, !acceptNow || polled[1].revents == 0, acceptAll(into: &state) == .stopped {
                    listening = false
                }
                if acceptNow, polled[1].revents != 0 {
                    switch acceptAll(into: &state) {
                    case .stopped: listening = false
                    case .pause: acceptPausedUntil = DispatchTime.now().uptimeNanoseconds + 100_000_000
                    case .drained: break
                    }
                }
                let offset = acceptNow ? 2 : 1
                for (index, entry) in watched.enumerated() where polled[offset + index].revents != 0 {
                    state.ready(entry.id, polled[offset + index].revents)
                }
            }
            state.expire(now: DispatchTime.now().uptimeNanoseconds)
        }
        close(listener)
        socket.loopEnded()
    }

    private func takeEvents(into state: inout LoopState) {
        var count: UInt64 = 0
        _ = Glibc.read(wake, &count, 8)
        let events = inbox.withLock { events in
            defer { events.removeAll() }
            return events
        }
        for event in events {
            switch event {
            case .identified(let id, let caller): state.identified(id, caller)
            case .answered(let id, let answer): state.answered(id, answer)
            }
        }
    }

    private enum AcceptOutcome { case drained, pause, stopped }

    /// Every connection waiting on the listener; its peer checked to be this user, counted, and
    /// its identification started.
    private func acceptAll(into state: inout LoopState) -> AcceptOutcome {
        // At most this many a round: a flood of connections must not keep the loop from the others.
        for _ in 0..<Self.mostAcceptedARound {
            let fd = csocket_accept_cloexec(listener)
            guard fd >= 0 else {
                if socket.isStopping { return .stopped }
                if errno == EAGAIN || errno == EINTR || errno == ECONNABORTED { return .drained }
                // Out of descriptors or memory: the next try a moment later.
                return .pause
            }
            state.accepted(fd)
        }
        return .drained
    }

    static let mostAcceptedARound = 64
}

/// A connection as the loop serves it.
final class Served {
    /// `closed`: ended (its descriptor closed, its number free for anything the process opens next);
    /// no step touches it again.
    enum Phase { case identifying, reading, answering, writing, draining, closed }

    let id: UInt64
    let fd: Int32
    let peer: AgentSocket.Peer
    let program: String
    var connection: AgentSocket.Connection?
    var phase = Phase.identifying
    var channel = OIDCAgentChannel()
    var strangerWrote = false
    /// Whether the caller reached the agent through ssh: its hang-up is a half-close.
    var remote = false
    /// Bytes to write, and whether the connection ends (drains) once they are written.
    var outbox: ArraySlice<UInt8> = []
    var endsAfterWriting = false
    /// Uptime nanoseconds this phase ends at; nil for none.
    var deadline: UInt64?
    /// While answering: whether a hang-up is still watched for (reported once).
    var watching = true
    var drained = 0

    init(id: UInt64, fd: Int32, peer: AgentSocket.Peer, program: String) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.program = program
    }
}
