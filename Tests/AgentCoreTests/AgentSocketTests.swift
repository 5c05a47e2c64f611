import AgentCore
import Foundation
import Logging
import OAuthCore
import Synchronization
import TestSupport
import Testing

/// What reached the handler.
final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [(AgentSocket.Peer, AgentRequest)] = []
    func add(_ peer: AgentSocket.Peer, _ request: AgentRequest) { lock.withLock { requests.append((peer, request)) } }
    var all: [(AgentSocket.Peer, AgentRequest)] { lock.withLock { requests } }
}

/// The agent's socket, with real clients: plain JSON from this test, and the
/// unmodified `oidc-token` of Debian's oidc-agent-cli.
@Suite struct AgentSocketTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("socket-\(UUID().uuidString)")
    var path: String { directory.appendingPathComponent("latchkey/agent.sock").path }
    static let token = AgentToken(
        accessToken: "the-token", tokenType: "Bearer", expiresAt: Date(timeIntervalSince1970: 1_900_000_000), scopes: ["openid"],
        provider: "github", issuer: "https://github.com")

    /// A socket whose handler answers `the-token` for github and refuses anything else, and notes each request.
    func serve(_ seen: Seen) throws -> AgentSocket {
        let socket = AgentSocket(path: path, logger: Logger(label: "test")) { connection, request in
            seen.add(connection.peer, request)
            return request.target == .provider("github") ? .success(Self.token) : .failure(AgentRefusal(.denied, "Not this one."))
        }
        try socket.start()
        return socket
    }

    /// One plain request and its answer, as a script would send it: on a thread of its own, never
    /// one of the few that run every task (the agent's work needs those while this waits).
    func ask(_ bytes: [UInt8], closeAfterSending: Bool = false) async -> String {
        let path = self.path
        return await BlockingWork.run { Self.blockingAsk(path, bytes, closeAfterSending) }
    }

    static func blockingAsk(_ path: String, _ bytes: [UInt8], _ closeAfterSending: Bool) -> String {
        let fd = AgentSocket.connectTo(path)
        guard fd >= 0 else { return "no connection" }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if closeAfterSending { shutdown(fd, Int32(SHUT_WR)) }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            guard n > 0 else { break }
            answer += chunk[0..<n]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    @Test func aPlainRequestIsAnsweredAndItsPeerIsThisProcess() async throws {
        let seen = Seen()
        let socket = try serve(seen)
        defer { socket.stop() }
        let answer = await ask(Array(#"{"request":"access_token","account":"github"}"#.utf8))
        #expect(answer.contains(#""access_token":"the-token""#) && answer.contains(#""status":"success""#))
        #expect(seen.all.map(\.0) == [AgentSocket.Peer(pid: getpid(), uid: getuid())])
    }

    /// A socket stopped once its loop has served everything is freed, and with it what its handler
    /// holds: its loop and it held each other, so every stopped socket kept its handler's world alive
    /// (in the tests, a whole home with its sandbox, which outlived `swift test` as an orphan).
    @Test func aStoppedSocketIsFreedWithWhatItsHandlerHolds() async throws {
        final class Held: Sendable {}
        weak var held: Held?
        weak var weakSocket: AgentSocket?
        do {
            let kept = Held()
            held = kept
            let socket = AgentSocket(path: path, logger: Logger(label: "test")) { _, _ in
                withExtendedLifetime(kept) { .failure(AgentRefusal(.denied, "Not this one.")) }
            }
            weakSocket = socket
            try socket.start()
            _ = await ask(Array(#"{"request":"access_token","account":"github"}"#.utf8))
            socket.stop()
            #expect(await socket.served(within: .seconds(60)))
        }
        // The loop's thread lets go of it last, once its run has returned: a moment after `served`.
        let deadline = ContinuousClock.now + .seconds(60)
        while held != nil || weakSocket != nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakSocket == nil && held == nil, "the stopped socket, or what its handler held, is still there")
    }

    /// An oidc-agent client that sends its key and then half-closes: the agent answers with its own
    /// key, hears the end, and ends the connection once. (It used to read the closed descriptor
    /// again, whose number another part of the agent may have had by then: a debug build traps.)
    @Test func aClientThatHalfClosesAfterItsKeyIsEndedOnceAndOthersAreServed() async throws {
        let socket = try serve(Seen())
        defer { socket.stop() }
        let key = Data(repeating: 0x42, count: 32).base64EncodedString()
        #expect(key.utf8.count == 44)
        let answer = await ask(Array(key.utf8), closeAfterSending: true)
        #expect(answer.utf8.count == 44, "the agent's own key, then the end: \(answer)")
        #expect(await ask(Array(#"{"request":"access_token","account":"github"}"#.utf8)).contains(#""status":"success""#))
    }

    @Test func theDirectoryAndSocketAreTheOwnersAlone() async throws {
        let socket = try serve(Seen())
        defer { socket.stop() }
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(directory.appendingPathComponent("latchkey").path, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    @Test func badRequestsGetTheProtocolsFailureAndOthersAreStillServed() async throws {
        let seen = Seen()
        let socket = try serve(seen)
        defer { socket.stop() }
        #expect(await ask(Array("{\"request\":\"gen\"}".utf8)).contains(#""status":"failure""#))
        #expect(
            await ask(Array("{\"a\":\"".utf8) + Array(repeating: UInt8(ascii: "a"), count: 100_000)).contains("larger than 65536 bytes"))
        #expect(await ask(Array("{\"request\":\"access_tok".utf8), closeAfterSending: true).contains("ended before it was complete"))
        // A client that goes away mid-request: nothing reaches the handler.
        let fd = AgentSocket.connectTo(path)
        _ = Array("{\"request\":".utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(fd)
        #expect(await ask(Array(#"{"request":"access_token","account":"github"}"#.utf8)).contains("the-token"))
        #expect(seen.all.count == 1, "only the whole request reached the agent")
    }

    @Test func aSecondAgentYieldsToTheFirstAndAStaleSocketIsReplaced() async throws {
        let first = try serve(Seen())
        let second = AgentSocket(path: path, logger: Logger(label: "test")) { _, _ in .failure(AgentRefusal(.failed, "second")) }
        #expect(throws: AgentRefusal(.failed, "Another Latchkey agent answers at \(path) already; this one leaves it be.")) {
            try second.start()
        }
        #expect(await ask(Array(#"{"request":"access_token","account":"github"}"#.utf8)).contains("the-token"), "the first still answers")
        first.stop()
        // A socket file left by an agent that was killed: the next one takes its place.
        close(boundSocket(at: path))
        #expect(FileManager.default.fileExists(atPath: path))
        let third = try serve(Seen())
        defer { third.stop() }
        #expect(await ask(Array(#"{"request":"access_token","account":"github"}"#.utf8)).contains("the-token"))
    }

    static let oidcToken = "/usr/bin/oidc-token"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: oidcToken), "oidc-agent-cli is installed by make test"))
    func oidcTokenPrintsTheTokenAndTheRefusal() async throws {
        let seen = Seen()
        let socket = try serve(seen)
        defer { socket.stop() }
        let (status, output, errors) = try await run(Self.oidcToken, ["--time=120", "--scope=openid", "github"])
        #expect(status == 0 && output == "the-token\n", "\(errors)")
        let request = try #require(seen.all.first?.1)
        #expect(
            request == AgentRequest(target: .provider("github"), minimumValidity: 120, scopes: ["openid"], applicationHint: "oidc-token"))
        let refused = try await run(Self.oidcToken, ["gitlab"])
        #expect(refused.0 == 1 && refused.1.isEmpty)
        #expect(refused.2.contains("Error: Not this one."))
    }

    /// Another user, with the right to pass the directory's permissions (so that only the agent's own
    /// check stands in its way): refused before anything is read.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root to be another user"))
    func anotherUserIsRefusedAtTheSocketAsRoot() async throws {
        let seen = Seen()
        let socket = try serve(seen)
        defer { socket.stop() }
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            try:
                s.sendall(b'{"request":"access_token","account":"github"}')
                print("answered" if s.recv(65536) else "closed")
            except (BrokenPipeError, ConnectionResetError):
                print("closed")
            """
        let (status, output, errors) = try await run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=+dac_override", "--ambient-caps=+dac_override",
                "/usr/bin/python3", "-c", script, path,
            ])
        #expect(status == 0, "\(errors)")
        #expect(output == "closed\n", "the connection was closed unanswered")
        #expect(seen.all.isEmpty)
    }

    /// A process connects, and a child it forks writes the request on the inherited connection (its
    /// parent could meanwhile exec a program the person allowed, and be named as the caller): refused,
    /// with a sentence, and the handler never asked. Then the parent writing, as before.
    @Test func aRequestWrittenByAChildOnItsParentsConnectionIsRefused() async throws {
        let seen = Seen()
        let socket = try serve(seen)
        defer { socket.stop() }
        let script = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            writer = os.fork() if sys.argv[2] == "child" else 0
            if writer:
                os.waitpid(writer, 0)
                sys.exit(0)
            s.sendall(b'{"request":"access_token","account":"github"}')
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
            print(answer.decode())
            """
        let (status, output, errors) = try await run("/usr/bin/python3", ["-c", script, path, "child"])
        #expect(status == 0, "\(errors)")
        #expect(output.contains(#""status":"failure""#) && !output.contains("the-token"), "\(output)")
        #expect(output.contains("written by another process than the one that connected"), "\(output)")
        #expect(seen.all.isEmpty, "the handler was never asked")

        let (_, parents, _) = try await run("/usr/bin/python3", ["-c", script, path, "parent"])
        #expect(parents.contains(#""access_token":"the-token""#), "\(parents)")
        #expect(seen.all.count == 1)
    }

    /// One process holding all of its slots (16 connections that send nothing): its next request is
    /// refused with the agent's sentence, never taken for "no agent" (then the command would sign in and
    /// print the token itself, with nobody asked).
    @Test func aBusyAgentIsARefusalNeverNone() async throws {
        let socket = try serve(Seen())
        defer { socket.stop() }
        let path = self.path
        let held = (0..<AgentSocket.mostPerProcess).map { _ in AgentSocket.connectTo(path) }
        defer { for fd in held where fd >= 0 { close(fd) } }
        #expect(held.allSatisfy { $0 >= 0 })
        let answer = await BlockingWork.run { AgentClient.ask(AgentRequest(target: .provider("github")), at: path) }
        guard case .failure(let refusal)? = answer else {
            return #expect(Bool(false), "taken for no agent, or served: \(String(describing: answer))")
        }
        #expect(refusal.sentence.contains("busy"), "\(refusal.sentence)")
    }

    /// Many processes of one program cannot take every slot: past `mostPerProgram`, that program's
    /// connections are refused as busy, and another program is still served.
    @Test func oneProgramCannotTakeEverySlot() async throws {
        let socket = try serve(Seen())
        defer { socket.stop() }
        // Children of one program hold `each` connections apiece; each refusal (an answer at once, then
        // a close) is reported to the parent as it comes, which counts them until it has the number
        // expected (the event), or gives up after a minute.
        let script = """
            import os, select, socket, sys, time
            path, processes, each, expected = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
            reports, stop = os.pipe(), os.pipe()
            for _ in range(processes):
                if os.fork() == 0:
                    # The parent's close of the stop pipe must reach every child: none keeps a write end.
                    os.close(stop[1]); os.close(reports[0])
                    held = [socket.socket(socket.AF_UNIX) for _ in range(each)]
                    for s in held: s.connect(path)
                    waiting = set(held)
                    while True:
                        ready, _, _ = select.select(list(waiting) + [stop[0]], [], [])
                        if stop[0] in ready: os._exit(0)
                        for s in ready:
                            waiting.discard(s)
                            if b"busy" in s.recv(65536): os.write(reports[1], b"b")
            counted, deadline = 0, time.monotonic() + 60
            while counted < expected and time.monotonic() < deadline:
                ready, _, _ = select.select([reports[0]], [], [], 1)
                if ready: counted += len(os.read(reports[0], 4096))
            os.close(stop[1])
            print(counted)
            """
        let extra = 4
        let processes = (AgentSocket.mostPerProgram + extra * AgentSocket.mostPerProcess) / AgentSocket.mostPerProcess
        let expected = processes * AgentSocket.mostPerProcess - AgentSocket.mostPerProgram
        let (status, output, errors) = try await run(
            "/usr/bin/python3", ["-c", script, path, "\(processes)", "\(AgentSocket.mostPerProcess)", "\(expected)"])
        #expect(status == 0, "\(errors)")
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(expected)", "refused as busy, of this program's")
        let answer = await ask(Array(#"{"request":"access_token","account":"github"}"#.utf8))
        #expect(answer.contains(#""access_token":"the-token""#), "another program is served: \(answer)")
    }

    /// After its answer, a connection is drained for a second in all, however slowly its client
    /// trickles bytes: then it is closed, and its slot free.
    @Test(.timeLimit(.minutes(1)))
    func aClientTricklingAfterTheAnswerIsClosedWithinASecondOrSo() async throws {
        let socket = try serve(Seen())
        defer { socket.stop() }
        let script = """
            import socket, sys, time
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            s.sendall(b'{"request":"access_token","account":"github"}')
            answer = b""
            while chunk := s.recv(65536): answer += chunk
            started = time.monotonic()
            try:
                while time.monotonic() - started < 30:
                    s.send(b" "); time.sleep(0.2)
                print("still open after 30 s")
            except (BrokenPipeError, ConnectionResetError):
                print("closed" if b"the-token" in answer else "no answer")
            """
        let (status, output, errors) = try await run("/usr/bin/python3", ["-c", script, path])
        #expect(status == 0, "\(errors)")
        #expect(output == "closed\n")
    }

    /// A caller that hangs up while its answer is awaited (the person not yet asked) is heard at once:
    /// the handler, waiting for just that, returns, and its question would be taken back. The test
    /// waits for the event; a minute is only there to fail rather than hang.
    @Test(.timeLimit(.minutes(1)))
    func aCallerThatHangsUpWhileItsAnswerIsAwaitedIsHeard() async throws {
        let heard = ThreadSignal()
        let socket = AgentSocket(path: path, logger: Logger(label: "test")) { connection, _ in
            await connection.hangUp.wait()
            heard.signal()
            return .failure(AgentRefusal(.denied, "Taken back."))
        }
        try socket.start()
        defer { socket.stop() }
        let path = self.path
        let hungUp = await BlockingWork.run { () -> Bool in
            let fd = AgentSocket.connectTo(path)
            guard fd >= 0 else { return false }
            let request = Array(#"{"request":"access_token","account":"github"}"#.utf8)
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(fd)
            return heard.wait(until: .now() + 50)
        }
        #expect(hungUp, "the handler never heard the caller hang up")
    }

    /// `executable` with OIDC_SOCK naming this test's socket: its exit status, standard output and error.
    func run(_ executable: String, _ arguments: [String]) async throws -> (Int32, String, String) {
        let path = self.path
        return try await BlockingWork.run { Result { try Self.blockingRun(path, executable, arguments) } }.get()
    }

    static func blockingRun(_ path: String, _ executable: String, _ arguments: [String]) throws -> (Int32, String, String) {
        let output = Pipe()
        let errors = Pipe()
        let child = try Spawned(
            "/usr/bin/env", ["OIDC_SOCK=\(path)", executable] + arguments, output: output.fileHandleForWriting.fileDescriptor,
            errors: errors.fileHandleForWriting.fileDescriptor)
        try output.fileHandleForWriting.close()
        try errors.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        let status = child.wait(timeout: 60) ?? -1
        return (status, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}
