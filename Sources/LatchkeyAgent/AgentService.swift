import AgentCore
import Dispatch
import FoundationEssentials
import GioKit
import Glibc
import LatchkeyCore
import LatchkeyServices
import Logging
import OAuthCore
import Synchronization

/// The agent as a process of the session: the bus name `io.github.latchkey.Agent`
/// (so D-Bus starts it on first use, and a second one yields), its D-Bus object,
/// and the oidc-agent socket, on GLib's loop with no GTK: a question or a sign-in is shown by a
/// child started for it (`AgentHelper`).
///
/// The object is exported before the name is asked for: the bus holds a client's
/// call that started the agent until the name is owned, and the object must be
/// there to answer it.
@MainActor
final class AgentService {
    nonisolated static let busName = AgentBusInterface.busName
    nonisolated static let objectPath = AgentBusInterface.objectPath

    private let agent: TokenAgent
    private let broker: TokenBroker
    private let providers: AgentProviders
    private let socket: AgentSocket?
    private let logger: Logger
    private var export: DBusExport?
    private var signals: [any DispatchSourceSignal] = []

    init(agent: TokenAgent, broker: TokenBroker, providers: AgentProviders, socketPath: String?, logger: Logger) {
        self.agent = agent
        self.broker = broker
        self.providers = providers
        self.logger = logger
        socket = socketPath.map { path in
            AgentSocket(path: path, logger: logger) { [agent] connection, request in
                switch connection.caller {
                case .failure(let refusal): return .failure(refusal)
                case .success(let caller):
                    return await agent.answer(
                        request, from: caller, stillTheSame: { await caller.stillTheSame() }, hangUp: connection.hangUp)
                }
            }
        }
    }

    /// Runs until the session ends (or SIGTERM); 0 at once when another agent serves this session
    /// (its bus name, or its socket), or the socket cannot be made, which is said: as before the
    /// agent was a program of its own, a session has one agent with both or none.
    func run() -> Int32 {
        // Its own name on the desktop (window lists, the accessibility bus): not the window's.
        PlainLoop.setName("Latchkey agent", programName: "latchkey-agent")
        // Passed by the service manager (systemd --user's latchkey-agent.socket), the socket is this agent's to
        // serve whoever holds the bus name; and the name is this one's to serve whoever serves the socket. One
        // agent serves both, except where the bus starts agents by itself beside systemd's socket (a session
        // bus not run by systemd --user): then one each, sharing the store and its refresh lock.
        let passed = socket?.isPassed ?? false
        var bus: OpaquePointer?
        switch SessionBus.shared() {
        case .success(let connection): bus = connection
        case .failure(let error): logger.warning("No session bus (\(error)): serving the socket only")
        }
        if let bus {
            do {
                export = try DBusExport(
                    connection: bus, path: Self.objectPath, interfaceXML: AgentBusInterface.introspection,
                    handler: AgentInterface(agent: agent, broker: broker, providers: providers, logger: logger).handle)
            } catch {
                logger.error("The D-Bus object could not be exported: \(error)")
            }
            switch SessionBus.requestName(Self.busName, on: bus) {
            case .owned: break
            case .taken where passed:
                logger.warning("The bus name \(Self.busName) is another agent's: serving the socket the service manager passed, only")
                export?.unregister()
                export = nil
            case .taken:
                Descriptor.standardError.write("latchkey: Latchkey's agent already runs in this session; this one leaves it be.\n")
                return 0
            case .failed(let reason):
                logger.warning("The bus name \(Self.busName) could not be had (\(reason)): serving the socket only")
                export?.unregister()
                export = nil
            }
        }
        var listening = socket != nil
        do {
            try socket?.start()
        } catch {
            guard export != nil, !passed, let path = socket?.path, AgentSocket.isServed(at: path) else {
                Descriptor.standardError.write("latchkey: \(error)\n")
                return 0
            }
            logger.warning("Another agent serves the socket (the service manager's): serving D-Bus only")
            listening = false
        }
        if socket == nil { logger.warning("No XDG_RUNTIME_DIR: the oidc-agent socket is off; D-Bus only") }
        stopOnSignals()
        logger.info(
            "Agent ready",
            metadata: ["bus": "\(export == nil ? "none" : Self.busName)", "socket": "\(listening ? socket?.path ?? "none" : "none")"])
        PlainLoop.run()
    }

    /// SIGTERM and SIGINT end the agent cleanly: it takes no more requests (the socket file goes, the
    /// bus name is given up, so that the next agent can start), takes back the questions on the screen,
    /// answers the requests under way (a renewal included: as long as the provider and the keyring may
    /// take), writes out every answer, then ends. A program asking meanwhile was answered, not dropped
    /// (`make soak` ends the agent under 64 callers). A second signal while it drains ends it at once.
    /// Set by the first signal: a second one ends the agent at once.
    private nonisolated static let draining = Mutex(false)
    /// How long a renewal under way may take: the provider (twice: a retry) and the keyring's wait.
    private nonisolated static let longestRenewal = Duration.seconds(150)

    private func stopOnSignals() {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let (socket, agent, logger) = (self.socket, self.agent, self.logger)
            let ownsName = export != nil
            source.setEventHandler { @Sendable in
                let first = Self.draining.withLock { was in
                    defer { was = true }
                    return !was
                }
                guard first else { _exit(0) }
                socket?.stop()
                if ownsName, case .success(let bus) = SessionBus.shared() { SessionBus.releaseName(Self.busName, on: bus) }
                Task.detached {
                    let drained = await agent.drained(within: Self.longestRenewal)
                    // The socket's answers written out (its loop ends once every connection has), and the bus's sent.
                    let written = await socket?.served(within: .seconds(5)) ?? true
                    if ownsName, case .success(let bus) = SessionBus.shared() { SessionBus.flush(bus) }
                    logger.info("Agent ended", metadata: ["drained": "\(drained && written)"])
                    CurlTransport.endAll()
                    exit(0)
                }
            }
            source.resume()
            signals.append(source)
        }
    }
}
