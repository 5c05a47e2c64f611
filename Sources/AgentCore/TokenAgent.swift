import FoundationEssentials
import Logging

/// The agent's rule: a program gets a provider's token once the person allowed it,
/// always (kept in `ProgramGrants`) or this once (asked through `ConsentAsker`).
/// Every way in — the socket, D-Bus — hands its caller and request here.
///
/// Requests from one program for one provider that arrive while the person is
/// being asked wait for that one answer rather than open a dialog each.
public actor TokenAgent {
    private let broker: TokenBroker
    public nonisolated let grants: ProgramGrants
    private let asker: any ConsentAsker
    private let logger: Logger
    private var asking: [QuestionKey: Task<ConsentAnswer?, Never>] = [:]

    private struct QuestionKey: Hashable {
        let program: Program
        let file: ExecutableFile?
        let provider: String
    }

    public init(broker: TokenBroker, grants: ProgramGrants, asker: any ConsentAsker, logger: Logger) {
        self.broker = broker
        self.grants = grants
        self.asker = asker
        self.logger = logger
    }

    /// A token for `caller`, if the person allows it.
    public func answer(_ request: AgentRequest, from caller: Caller) async -> Result<AgentToken, AgentRefusal> {
        let provider: (id: String, name: String)
        do { provider = try await broker.provider(for: request.target) } catch { return .failure(error) }
        let metadata: Logger.Metadata = ["program": "\(caller.program.name)", "provider": "\(provider.id)"]
        switch grants.decision(for: caller, provider: provider.id) {
        case .allowed:
            break
        case let decision:
            let question = ConsentQuestion(
                caller: caller, providerID: provider.id, providerName: provider.name, scopes: request.scopes,
                applicationHint: request.applicationHint, changed: decision == .changed)
            switch await ask(question) {
            case nil:
                logger.notice("No display to ask on; the program was refused", metadata: metadata)
                return .failure(AgentRefusal(.denied, ConsentSentence.nobodyToAsk(question)))
            case .deny?:
                logger.notice("The person refused the program", metadata: metadata)
                return .failure(AgentRefusal(.denied, ConsentSentence.denied(question)))
            case .alwaysAllow?:
                do {
                    try grants.allow(caller.program, file: caller.file, provider: provider.id, scopes: request.scopes)
                } catch {
                    // Allowed all the same, this once: the person said yes.
                    logger.warning("The program is allowed this once: \(error)", metadata: metadata)
                }
            case .allowOnce?:
                break
            }
        }
        let answer = await broker.token(for: request)
        if case .success = answer {
            grants.used(caller.program, provider: provider.id)
            logger.info("Token given", metadata: metadata)
        }
        return answer
    }

    private func ask(_ question: ConsentQuestion) async -> ConsentAnswer? {
        let key = QuestionKey(program: question.caller.program, file: question.caller.file, provider: question.providerID)
        if let pending = asking[key] { return await pending.value }
        let asker = self.asker
        let pending = Task { await asker.ask(question) }
        asking[key] = pending
        let answer = await pending.value
        asking[key] = nil
        return answer
    }
}
