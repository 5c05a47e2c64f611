import CSocket
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import OAuthCore

/// The connections the loop serves, and each step of one (`SocketLoop` says the phases). Touched
/// only on the loop's thread.
struct LoopState {
    let socket: AgentSocket
    let loop: SocketLoop
    private(set) var connections: [UInt64: Served] = [:]
    private var nextID: UInt64 = 0

    init(socket: AgentSocket, loop: SocketLoop) {
        self.socket = socket
        self.loop = loop
    }

    private static let halfClosed: Int16 = 0x2000  // POLLRDHUP, which the Glibc module does not import

    /// What poll(2) watches on each connection now: its request's bytes, its hang-up, room to write.
    func watched() -> [(id: UInt64, fd: Int32, events: Int16)] {
        connections.values.compactMap { served in
            switch served.phase {
            case .identifying, .closed: nil
            case .reading, .draining: (served.id, served.fd, Int16(POLLIN))
            case .writing: (served.id, served.fd, Int16(POLLOUT))
            // Closed, not half-closed: a script may shut its sending side down and still wait for the answer.
            // Through ssh, though, a program that ended on the far side is only a half-close here (ssh
            // passes its end on as one, and waits for the answer on the channel): that is the hang-up.
            // POLLHUP and POLLERR are reported whatever is asked for.
            case .answering:
                served.watching && !served.connection!.hangUp.happened ? (served.id, served.fd, served.remote ? Self.halfClosed : 0) : nil
            }
        }
    }

    func nextDeadline() -> UInt64? {
        connections.values.compactMap(\.deadline).min()
    }

    // MARK: Steps

    mutating func accepted(_ fd: Int32) {
        guard let peer = AgentSocket.peer(of: fd), peer.uid == getuid() else {
            let uid = AgentSocket.peer(of: fd).map { "\($0.uid)" } ?? "unknown"
            socket.logger.notice("Refused a connection from another user", metadata: ["uid": "\(uid)"])
            close(fd)
            return
        }
        // Slots per process, and per program (what its executable is called; any program can make
        // processes), so that one caller cannot take them all.
        let program = Identification.key(of: peer.pid, own: socket.own)
        guard socket.admit(peer.pid, program) else {
            socket.logger.notice("Too many connections at once; one was refused", metadata: ["pid": "\(peer.pid)"])
            // Said, not only closed: a client must never take a busy agent for none (and sign in itself).
            AgentSocket.sayBusy(fd)
            close(fd)
            return
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        nextID += 1
        let served = Served(id: nextID, fd: fd, peer: peer, program: program)
        connections[served.id] = served
        // Who connected: first, before a byte of its request is read, on a thread of its own (never the
        // loop's, which a caller whose /proc cannot be read at once must not stall).
        let (loop, own, id) = (loop, socket.own, served.id)
        let started = BlockingWork.startThread {
            let caller =
                Identification.blocking(for: program) { AgentSocket.identify(peer, holding: fd, own: own) }
                ?? .failure(AgentSocket.notInTime)
            loop.post(.identified(id, caller))
        }
        if !started {
            AgentSocket.sayBusy(fd)
            end(served)
        }
    }

    mutating func identified(_ id: UInt64, _ caller: Result<Caller, AgentRefusal>) {
        guard let served = connections[id], served.phase == .identifying else { return }
        served.connection = AgentSocket.Connection(peer: served.peer, caller: caller)
        served.remote = (try? caller.get())?.program.remoteHost != nil
        // One deadline for the whole request, however it trickles in.
        served.phase = .reading
        served.deadline = Self.from(now: AgentSocket.requestTimeout)
        read(served)
    }

    mutating func answered(_ id: UInt64, _ answer: Result<AgentToken, AgentRefusal>) {
        guard let served = connections[id], served.phase == .answering, let connection = served.connection else { return }
        // A caller that hung up (through ssh, a half-close: it may still read) learns nothing of a
        // refusal: whether its question was taken back or there was nothing to ask about would
        // tell, at once and unseen, which names the agent knows.
        if case .failure = answer, connection.hangUp.happened {
            socket.logger.notice("The caller hung up before its answer; no refusal is written")
            return end(served)
        }
        let json: String
        switch answer {
        case .success(let token): json = OIDCAgentMessage.success(token)
        case .failure(let refusal): json = OIDCAgentMessage.failure(refusal)
        }
        let reply = served.channel.reply(json)
        guard !reply.isEmpty else { return end(served) }
        send(reply[...], on: served, thenEnd: true)
    }

    mutating func ready(_ id: UInt64, _ events: Int16) {
        guard let served = connections[id] else { return }
        switch served.phase {
        case .identifying, .closed: break
        case .reading: read(served)
        case .answering:
            // Reported once: a hang-up stays, and is not watched for again.
            served.watching = false
            let gone = Int16(POLLHUP | POLLERR) | (served.remote ? Self.halfClosed : 0)
            if events & gone != 0 { served.connection?.hangUp.signal() }
        case .writing: write(served)
        case .draining: drain(served)
        }
    }

    /// Each phase past its deadline: a request not whole in time is dropped; a question past the
    /// connection's lifetime is taken back and refused; an answer or a drain not done, closed.
    mutating func expire(now: UInt64) {
        for served in connections.values where served.deadline.map({ $0 <= now }) == true {
            switch served.phase {
            case .answering:
                served.connection?.hangUp.signal()
                let refusal = AgentRefusal(
                    .failed, "The agent gave up on this request after \(AgentSocket.connectionLifetime / 60) minutes.")
                send(served.channel.reply(OIDCAgentMessage.failure(refusal))[...], on: served, thenEnd: true)
            case .identifying, .reading, .writing, .draining:
                end(served)
            case .closed:
                break
            }
        }
    }

    // MARK: One connection

    private mutating func read(_ served: Served) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while served.phase == .reading {
            var sender: Int32 = 0
            let n = chunk.withUnsafeMutableBytes { csocket_recv_from_sender(served.fd, $0.baseAddress, UInt($0.count), &sender) }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN { return }
            // Gone: nothing to answer, nothing changed.
            if n < 0 { return end(served) }
            // Written by another process than the one that connected: a child it handed the connection to
            // (after which the parent may have become an allowed program). The request is answered with
            // a refusal, whoever goes on to write.
            if n > 0, sender != served.peer.pid { served.strangerWrote = true }
            switch n == 0 ? served.channel.ended() : served.channel.received(chunk[0..<n]) {
            case .needMore:
                if n == 0 { return end(served) }
            case .send(let bytes):
                send(bytes[...], on: served, thenEnd: false)
            case .request(let request):
                answer(request, on: served)
            }
        }
    }

    /// The handler's answer, in a task of its own; the loop watches for the caller's hang-up meanwhile.
    private mutating func answer(_ request: Result<AgentRequest, AgentRefusal>, on served: Served) {
        guard let connection = served.connection else { return end(served) }
        served.phase = .answering
        served.deadline = Self.from(now: AgentSocket.connectionLifetime)
        let (handler, logger, loop, id, program, stranger) = (
            socket.handler, socket.logger, loop, served.id, served.program, served.strangerWrote
        )
        // Its own copy of the descriptor, for the last look at who holds the connection: the loop may
        // have closed its own by then (a caller past the lifetime).
        let held = fcntl(served.fd, F_DUPFD_CLOEXEC, 0)
        Task.detached {
            defer { if held >= 0 { close(held) } }
            var answer: Result<AgentToken, AgentRefusal>
            switch (stranger, request) {
            case (true, _): answer = .failure(AgentSocket.strangerRefusal)
            case (false, .failure(let refusal)): answer = .failure(refusal)
            case (false, .success(let request)): answer = await handler(connection, request)
            }
            if stranger { logger.notice("A request written by another process than the one that connected was refused") }
            // The token goes only to a connection the process that made it still holds, close-on-exec:
            // one that exec'd another program since (then the flag is gone, or the descriptor with it)
            // while a child it forked reads the answer gets nothing. A process that hides its
            // descriptors (non-dumpable) cannot be looked at, and is asked about as one that hides.
            if case .success = answer,
                await Identification.run(for: program, { held >= 0 && AgentSocket.stillHolds(held, connection) }) != true
            {
                answer = .failure(AgentSocket.handedOnRefusal)
                logger.notice("The process that connected no longer holds its connection; no token given")
            }
            loop.post(.answered(id, answer))
        }
    }

    /// `bytes` written as the connection takes them; then more of the request is read, or the
    /// connection ends (drained first).
    private mutating func send(_ bytes: ArraySlice<UInt8>, on served: Served, thenEnd: Bool) {
        served.outbox += bytes
        served.endsAfterWriting = served.endsAfterWriting || thenEnd
        served.phase = .writing
        if thenEnd { served.deadline = Self.from(now: AgentSocket.requestTimeout) }
        write(served)
    }

    private mutating func write(_ served: Served) {
        while served.phase == .writing, !served.outbox.isEmpty {
            let n = served.outbox.withUnsafeBytes { Glibc.send(served.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN { return }
            guard n > 0 else { return end(served) }
            served.outbox = served.outbox.dropFirst(n)
        }
        guard served.phase == .writing else { return }
        served.outbox = []
        if served.endsAfterWriting {
            // After the answer: what the client still sends (an oversized request's rest) is read and
            // dropped until it closes, at most a second and a MiB, so that closing with unread bytes
            // does not reset the connection before the client has read the answer.
            shutdown(served.fd, Int32(SHUT_WR))
            served.phase = .draining
            served.deadline = DispatchTime.now().uptimeNanoseconds + 1_000_000_000
            drain(served)
        } else {
            served.phase = .reading
            read(served)
        }
    }

    private mutating func drain(_ served: Served) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while served.phase == .draining, served.drained < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { recv(served.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN { return }
            guard n > 0 else { break }
            served.drained += n
        }
        if served.phase == .draining { end(served) }
    }

    /// Once per connection: a second end would close a number another part of the process may
    /// hold by then.
    private mutating func end(_ served: Served) {
        guard served.phase != .closed else { return assertionFailure("a connection the agent's socket ended was ended again") }
        served.phase = .closed
        served.deadline = nil
        connections.removeValue(forKey: served.id)
        close(served.fd)
        socket.release(served.peer.pid, served.program)
    }

    private static func from(now seconds: Int) -> UInt64 {
        DispatchTime.now().uptimeNanoseconds + UInt64(seconds) * 1_000_000_000
    }
}
