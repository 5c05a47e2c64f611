import CSocket
import FoundationEssentials
import Glibc
import OAuthCore

/// Who is on a connection, and what it is told when it cannot be served.
extension AgentSocket {
    /// Who connected, and how it holds its end: a connection it does not hold (handed on already) is
    /// refused; one kept across an exec (not close-on-exec) marks the caller as one that may not be the
    /// program named (asked each time).
    static func identify(_ peer: Peer, holding fd: Int32, own: OwnExecutable) -> Result<Caller, AgentRefusal> {
        let identified = Caller.identify(pid: peer.pid, uid: peer.uid, own: own)
        guard case .success(var caller) = identified else { return identified }
        switch SocketHolders.holding(otherEndOf: fd, pid: peer.pid) {
        case .closeOnExec?: break
        case .keptAcrossExec?: caller.connectionKeptAcrossExec = true
        case .none?: return .failure(handedOnRefusal)
        case nil:
            // Its descriptors cannot be read: it hides them with its executable, and is asked about as one
            // that hides; else (too many to look at) it may not be the program named.
            if caller.program.hiddenName == nil { caller.connectionKeptAcrossExec = true }
        }
        return .success(caller)
    }

    /// Before a token goes out: the process that connected still holds its end (an exec that closed it,
    /// or a connection handed on, takes the token from nobody), as far as that can be read.
    static func stillHolds(_ fd: Int32, _ connection: Connection) -> Bool {
        switch SocketHolders.holding(otherEndOf: fd, pid: connection.peer.pid) {
        case .closeOnExec?: true
        case .keptAcrossExec?: (try? connection.caller.get())?.connectionKeptAcrossExec == true
        case .none?: false
        case nil: (try? connection.caller.get()).map { $0.program.hiddenName != nil || $0.connectionKeptAcrossExec } ?? false
        }
    }

    static let notInTime = AgentRefusal(.denied, "The program that asked could not be identified in time.")

    static let handedOnRefusal = AgentRefusal(
        .denied,
        "The process that connected no longer holds its connection as it made it (it became another program, or handed the "
            + "connection on); it gets no token.")

    static let strangerRefusal = AgentRefusal(
        .denied,
        "The request was written by another process than the one that connected (one it handed its connection to); it gets no token.")

    /// The connections open now: in all, per process, per program.
    struct OpenCounts {
        var total = 0
        var processes: [Int32: Int] = [:]
        var programs: [String: Int] = [:]
    }

    /// A refusal a client can read (plain JSON, which every client reads before any encryption is
    /// agreed), written without waiting: the agent is busy, not gone.
    static func sayBusy(_ fd: Int32) {
        let sentence = "Latchkey's agent is busy with too many requests at once; try again in a moment."
        let bytes = Array(OIDCAgentMessage.failure(AgentRefusal(.failed, sentence)).utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }
}
