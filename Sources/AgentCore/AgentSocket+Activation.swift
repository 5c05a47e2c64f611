import CSocket
import FoundationEssentials
import Glibc

/// Socket activation: the listening socket made and held by the service manager (systemd's
/// `sd_listen_fds` protocol; `latchkey-agent.socket` under `systemd --user`), which starts the agent
/// at the first connection and again after it ended or was killed. A connection made while no agent
/// runs waits in that socket's backlog for the next one, instead of finding nobody: oidc-agent's
/// clients do not ask twice.
extension AgentSocket {
    /// The first descriptor a service manager passes (`SD_LISTEN_FDS_START`).
    static let firstPassed: Int32 = 3

    /// The listening socket passed for `path`; nil when none was passed to this process (the agent then
    /// makes its own), a refusal when some were and none of them listens at `path`.
    static func passedListener(
        for path: String, environment: [String: String], pid: Int32 = getpid(), first: Int32 = firstPassed
    ) -> Result<Int32, AgentRefusal>? {
        // For this process alone: a variable inherited from a parent that was passed sockets is not this one's.
        guard let listenPID = environment["LISTEN_PID"].flatMap({ Int32($0) }), listenPID == pid,
            let count = environment["LISTEN_FDS"].flatMap({ Int32($0) }), count >= 1, count < 64
        else { return nil }
        guard let fd = (first..<(first + count)).first(where: { isListening($0, at: path) }) else {
            return .failure(
                AgentRefusal(
                    .failed,
                    "The service manager passed \(count) socket(s), none listening at \(path): latchkey-agent.socket's ListenStream must be %t/latchkey/agent.sock."
                ))
        }
        return .success(fd)
    }

    /// Whether a service manager passed this process its socket (`start` will serve that one).
    public var isPassed: Bool { Self.passedListener(for: path, environment: ProcessInfo.processInfo.environment) != nil }

    /// Whether `fd` is a Unix stream socket listening at `path`.
    static func isListening(_ fd: Int32, at path: String) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &length) == 0, value == Int32(SOCK_STREAM.rawValue) else { return false }
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) == 0, value == 1 else { return false }
        var address = sockaddr_un()
        var size = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) }
        }
        guard named == 0, address.sun_family == sa_family_t(AF_UNIX) else { return false }
        let bound = withUnsafeBytes(of: address.sun_path) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return bound == path
    }

    /// Takes the passed socket as this agent's listener: close-on-exec (no program the agent starts gets
    /// it), credentials stamped on every byte, and the variables gone from the environment.
    static func adoptPassed(_ fd: Int32) -> Bool {
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && csocket_pass_credentials(fd) == 0
            && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0
    }
}
