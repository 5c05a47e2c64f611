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

    /// Run in a process of its own (an exit test): `setenv` here, beside other tests starting programs
    /// with this process's `environ`, once made `posix_spawn` fail with EFAULT (the array it was reading
    /// freed under it by the `setenv` that grew it): "latchkey-sandbox could not be started: Bad address".
    @Test func takingItKeepsItFromWhatTheAgentStarts() async {
        await #expect(processExitsWith: .success) {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("passed-\(getpid()).sock").path
            let fd = boundSocket(at: path)
            unlink(path)  // adopting does not look at the path; nothing is left behind however this ends
            guard fd >= 0, listen(fd, 4) == 0, fcntl(fd, F_SETFD, 0) == 0 else { exit(2) }
            setenv("LISTEN_PID", "\(getpid())", 1)
            setenv("LISTEN_FDS", "1", 1)
            setenv("LISTEN_FDNAMES", "latchkey-agent.socket", 1)
            guard AgentSocket.adoptPassed(fd) else { exit(3) }
            guard fcntl(fd, F_GETFD) & FD_CLOEXEC != 0 else { exit(4) }  // no program the agent starts gets it
            guard getenv("LISTEN_FDNAMES") == nil, getenv("LISTEN_PID") == nil, getenv("LISTEN_FDS") == nil else { exit(5) }
            exit(0)
        }
    }
}
