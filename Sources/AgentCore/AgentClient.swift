import FoundationEssentials
import Glibc

/// Latchkey's own commands (`latchkey token`, the git credential helper) asking
/// the agent over its socket, in plain JSON: one request, one answer.
public enum AgentClient {
    /// The answer of this session's agent (`AgentSocket.clientPath`); nil when none runs. An agent
    /// named by `LATCHKEY_AGENT_SOCK` (forwarded over ssh) that does not answer is a refusal: the
    /// person asked for that agent, and signing in here instead is not what they meant.
    public static func ask(
        _ request: AgentRequest, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Result<AgentToken, AgentRefusal>? {
        guard let (path, forwarded) = AgentSocket.clientPath(environment: environment) else { return nil }
        let answer = ask(request, at: path)
        guard forwarded else { return answer }
        return answer
            ?? .failure(
                AgentRefusal(
                    .failed,
                    "No agent answers at \(AgentSocket.forwardedVariable) (\(path)): the ssh connection that forwards the desktop's agent "
                        + "there may have closed. Connect again (ssh -R), or unset \(AgentSocket.forwardedVariable) to sign in here."))
    }

    /// The agent's answer; nil only when nothing listens at `path` (the command then does the work
    /// itself): an agent that runs but does not take the request is a refusal.
    /// Waits for the answer as long as the person may take to answer the agent's question.
    /// An agent that closes the connection having written nothing went away mid-request (ended, or
    /// killed, and perhaps started again): asked again, twice at most, or, with none listening then, nil.
    /// The pause before each is for a killed agent's socket to be gone: until its process is torn down,
    /// it still takes a connection, then resets it (`make soak` saw git fail so after a `kill -9`).
    public static func ask(
        _ request: AgentRequest, at path: String, timeout: Int = 600, again: [UInt32] = [50_000, 250_000]
    ) -> Result<AgentToken, AgentRefusal>? {
        let fd = AgentSocket.connectTo(path)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var wait = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        // Connected, an agent runs: from here on, whatever goes wrong is its refusal, never "no agent"
        // (a busy agent taken for none would have the command sign in and hand the token out itself).
        // A busy agent says so before it closes; one that closed having said nothing, whether before
        // or after it took the request, hung up (as when ssh's forward takes the connection and finds
        // no agent behind it).
        let wrote = AgentSocket.writeAll(fd, Array(OIDCAgentMessage.encode(request).utf8))
        let (read, hungUp) = readAnswer(fd)
        guard let answer = read else {
            // Hung up on (not a wait that ran out: asked again, a question could show twice).
            if hungUp || !wrote, let pause = again.first {
                usleep(pause)
                return ask(request, at: path, timeout: timeout, again: Array(again.dropFirst()))
            }
            return .failure(AgentRefusal(.failed, "Latchkey's agent did not answer: the connection to it closed before its answer."))
        }
        return OIDCAgentMessage.answer(answer)
    }

    /// What the agent wrote before it closed (or the receive timeout ran out), nil for nothing; and
    /// whether the agent ended the connection (end of file, or reset) rather than the timeout running out.
    private static func readAnswer(_ fd: Int32) -> (answer: [UInt8]?, hungUp: Bool) {
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var hungUp = false
        while answer.count <= OIDCAgentChannel.largestMessage {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                hungUp = n == 0 || errno == ECONNRESET
                break
            }
            answer += chunk[0..<n]
        }
        return (answer.isEmpty ? nil : answer, hungUp)
    }
}
