import AgentCore
import ArgumentParser
import FoundationEssentials
import Glibc
import LatchkeyCore
import LatchkeyServices
import Logging
import OAuthCore

/// `latchkey-agent`: the agent other programs get tokens from (`latchkey agent`, and D-Bus, start it).
struct AgentMain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey-agent",
        abstract: "Latchkey's agent: give other programs your tokens, with your say, over D-Bus, oidc-agent's socket and git.",
        discussion: """
            D-Bus starts it when a program first asks (one runs per session); `latchkey agent` starts it by hand. \
            The first time a program asks for a provider's token, you are asked: Allow once, Always allow or Deny.
            """)

    @OptionGroup var waits: Waits

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        let level = logging.level(otherwise: .info)
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: level) }
        // A dialog that ended before its prompt was written is an error on that write, not the agent's end.
        signal(SIGPIPE, SIG_IGN)
        let logger = Logger(label: "Latchkey.Agent")
        let environment = ProcessInfo.processInfo.environment
        let services = Services(waits)
        // Before the broker, which tells it of sign-ins a renewal found ended.
        let notices = AgentNotices(logger: logger)
        let broker = TokenBroker(
            catalog: services.catalog, store: services.tokens, network: services.network, accounts: LatchkeyFiles.accounts,
            zeroConfiguration: services.zeroConfiguration(), configure: { id in try await services.configuration(of: id) },
            ended: notices.ended)
        let asker = ConsentChildren(environment: environment, logger: logger)
        let agent = TokenAgent(broker: broker, grants: LatchkeyFiles.allowedPrograms, asker: asker, logger: logger)
        let providers = AgentProviders(
            catalog: services.catalog, store: services.tokens, secrets: services.secrets, broker: broker,
            waitArguments: waits.arguments, display: asker)
        notices.sweepRegularly(broker)
        let status = MainActor.assumeIsolated {
            let service = AgentService(
                agent: agent, broker: broker, providers: providers, socketPath: AgentSocket.defaultPath(environment: environment),
                logger: logger)
            return withExtendedLifetime(service) { service.run() }
        }
        if status != 0 { throw ExitCode(status) }
    }
}

AgentMain.main()
