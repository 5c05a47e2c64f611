import AgentCore
import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

/// The agent as a process of the session: the bus name `io.github.latchkey.Agent`
/// (so D-Bus starts it on first use, and a second one yields), its D-Bus object,
/// and the oidc-agent socket. GTK is opened only for a question or a sign-in.
@MainActor
final class AgentService {
    nonisolated static let busName = "io.github.latchkey.Agent"
    nonisolated static let objectPath = "/io/github/latchkey/Agent1"
    nonisolated static let errorPrefix = "io.github.latchkey.Agent1.Error."

    private let agent: TokenAgent
    private let broker: TokenBroker
    private let providers: AgentProviders
    private let socket: AgentSocket?
    private let logger: Logger
    private let application = ServiceApplication(id: busName)
    private var export: DBusExport?
    private var signals: [any DispatchSourceSignal] = []

    init(agent: TokenAgent, broker: TokenBroker, providers: AgentProviders, socketPath: String?, logger: Logger) {
        self.agent = agent
        self.broker = broker
        self.providers = providers
        self.logger = logger
        socket = socketPath.map { path in
            AgentSocket(path: path, logger: logger) { [agent] peer, request in
                guard let caller = Caller.of(pid: peer.pid, uid: peer.uid) else {
                    return .failure(AgentRefusal(.failed, "The program that asked ended before it could be looked at."))
                }
                return await agent.answer(request, from: caller)
            }
        }
    }

    /// Runs until the session ends (or SIGTERM); 0 at once when another agent serves this session.
    func run() -> Int32 {
        // Its own name on the desktop (window lists, the accessibility bus): not the window's.
        Application.setName("Latchkey agent", programName: "latchkey-agent")
        var onBus = true
        do {
            try application.register()
        } catch .running {
            Descriptor.standardError.write("latchkey: Latchkey's agent already runs in this session; this one leaves it be.\n")
            return 0
        } catch {
            logger.warning("No session bus (\(error)): serving the socket only")
            onBus = false
        }
        do {
            try socket?.start()
        } catch {
            Descriptor.standardError.write("latchkey: \(error)\n")
            return 0
        }
        if socket == nil { logger.warning("No XDG_RUNTIME_DIR: the oidc-agent socket is off; D-Bus only") }
        if onBus, let connection = application.connection {
            do {
                export = try DBusExport(
                    connection: connection, path: Self.objectPath, interfaceXML: AgentInterface.xml,
                    handler: AgentInterface(agent: agent, broker: broker, providers: providers, logger: logger).handle)
            } catch {
                logger.error("The D-Bus object could not be exported: \(error)")
            }
        }
        stopOnSignals()
        application.hold()
        logger.info("Agent ready", metadata: ["bus": "\(onBus ? Self.busName : "none")", "socket": "\(socket?.path ?? "none")"])
        let status = onBus ? application.run() : MainLoop.runPlain()
        socket?.stop()
        return status
    }

    /// SIGTERM and SIGINT end the agent cleanly: the socket file goes with it.
    private func stopOnSignals() {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let socket = self.socket
            source.setEventHandler { @Sendable in
                socket?.stop()
                exit(0)
            }
            source.resume()
            signals.append(source)
        }
    }
}
