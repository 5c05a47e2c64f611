import FoundationEssentials
import Glibc

/// Latchkey's own commands (`latchkey token`, the git credential helper) asking
/// the agent over its socket, in plain JSON: one request, one answer.
public enum AgentClient {
    /// The answer of this session's agent (`AgentSocket.defaultPath`); nil when none runs.
    public static func ask(_ request: AgentRequest) -> Result<AgentToken, AgentRefusal>? {
        AgentSocket.defaultPath().flatMap { ask(request, at: $0) }
    }

    /// The agent's answer; nil when no agent answers at `path` (the command then does the work itself).
    /// Waits for the answer as long as the person may take to answer the agent's question.
    public static func ask(_ request: AgentRequest, at path: String, timeout: Int = 600) -> Result<AgentToken, AgentRefusal>? {
        let fd = AgentSocket.connectTo(path)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var wait = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        guard AgentSocket.writeAll(fd, Array(OIDCAgentMessage.encode(request).utf8)) else { return nil }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while answer.count <= OIDCAgentChannel.largestMessage {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            answer += chunk[0..<n]
        }
        guard !answer.isEmpty else { return .failure(AgentRefusal(.failed, "Latchkey's agent did not answer.")) }
        return OIDCAgentMessage.answer(answer)
    }
}
