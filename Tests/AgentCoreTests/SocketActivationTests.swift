import Foundation
import Glibc
import Testing

@testable import AgentCore

/// The socket a service manager passes (systemd's LISTEN_FDS protocol): taken only when passed to
/// this very process, listening, at the agent's own path; the real agent on such a socket, killed and
/// started again, is driven end to end (scenario `agent_socket_activated`).
@Suite struct SocketActivationTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("passed-\(UUID().uuidString.prefix(8)).sock").path
    var mine: [String: String] { ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "1"] }

    @Test func aListeningSocketPassedToThisProcessAtItsPathIsTaken() {
        let fd = boundSocket(at: path)
        defer {
            close(fd)
            unlink(path)
        }
        listen(fd, 4)
        guard case .success(let passed)? = AgentSocket.passedListener(for: path, environment: mine, first: fd) else {
            return #expect(Bool(false), "not taken")
        }
        #expect(passed == fd)
    }

    @Test func variablesMeantForAnotherProcessOrNoneAreNotThisOnes() {
        let fd = boundSocket(at: path)
        defer {
            close(fd)
            unlink(path)
        }
        listen(fd, 4)
        for environment in [
            [:], ["LISTEN_PID": "\(getppid())", "LISTEN_FDS": "1"], ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "0"],
            ["LISTEN_FDS": "1"], ["LISTEN_PID": "x", "LISTEN_FDS": "1"],
        ] {
            #expect(AgentSocket.passedListener(for: path, environment: environment, first: fd) == nil, "\(environment)")
        }
    }

    @Test func aPassedSocketElsewhereOrNotListeningIsSaid() {
        let fd = boundSocket(at: path)
        defer {
            close(fd)
            unlink(path)
        }
        guard case .failure(let unlistened)? = AgentSocket.passedListener(for: path, environment: mine, first: fd) else {
            return #expect(Bool(false), "a socket not listening was taken")
        }
        #expect(unlistened.sentence.contains("none listening at \(path)"))
        listen(fd, 4)
        guard case .failure(let elsewhere)? = AgentSocket.passedListener(for: path + ".other", environment: mine, first: fd) else {
            return #expect(Bool(false), "a socket at another path was taken")
        }
        #expect(elsewhere.sentence.contains("ListenStream"))
    }

    @Test func takingItKeepsItFromWhatTheAgentStarts() {
        let fd = boundSocket(at: path)
        defer {
            close(fd)
            unlink(path)
        }
        listen(fd, 4)
        _ = fcntl(fd, F_SETFD, 0)
        setenv("LISTEN_FDNAMES", "latchkey-agent.socket", 1)
        #expect(AgentSocket.adoptPassed(fd))
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "close-on-exec")
        #expect(getenv("LISTEN_FDNAMES") == nil && getenv("LISTEN_PID") == nil && getenv("LISTEN_FDS") == nil)
    }
}
