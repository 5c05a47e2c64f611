import FoundationEssentials
import Logging
import OAuthCore

/// The agent's rule: a program gets a provider's token (one account's) once the person allowed it,
/// always (kept in `ProgramGrants`) or this once (asked through `ConsentAsker`).
/// Every way in — the socket, D-Bus — hands its caller and request here.
///
/// One question per program and provider at a time: a request from the process
/// being asked about shares its answer; another process of the same program waits
/// for that answer, then is decided afresh (allowed always by then, or asked in turn).
/// Nobody answering within `consentTimeout` is a no.
public actor TokenAgent {
    private let broker: TokenBroker
    public nonisolated let grants: ProgramGrants
    private let asker: any ConsentAsker
    private let logger: Logger
    private let consentTimeout: Duration
    /// The question on the screen per program and account: who it asks about (the process, and
    /// whether its connection was kept across an exec: such a one shares no other's answer).
    /// What it was asked for (`narrowing`): the answer covers that and nothing wider.
    private var asking:
        [QuestionKey: (number: Int, asker: Caller.ProcessKey, keptAcrossExec: Bool, narrowing: Narrowing, answer: Task<Asked, Never>)] =
            [:]
    private var questions = 0
    /// When the person last said no to a program for an account: it is not asked about again at once
    /// (a program that asks again and again until a stray click says yes), but after `quietAfterDeny`.
    private var deniedAt: [QuestionKey: ContinuousClock.Instant] = [:]
    /// When a program not allowed what it asked is told so (`RefusalLine`).
    private let refusals: RefusalLine
    private let quietAfterDeny: Duration
    /// "Allow while connected": the ssh processes (and providers) allowed until they end. Kept in memory only.
    private var whileConnected: Set<ConnectionGrant> = []

    private struct ConnectionGrant: Hashable {
        let process: Caller.ProcessKey
        let provider: String
        let person: String?
        /// What the person allowed while connected: a request for more is asked again.
        let narrowing: Narrowing
    }

    /// How a question ended.
    private enum Asked: Sendable, Equatable {
        case answered(ConsentAnswer)
        case nobodyToAsk
        case noAnswerInTime
        /// The caller hung up first (its connection closed): the question was taken back.
        case callerGone
    }

    private struct QuestionKey: Hashable {
        let program: Program
        let provider: String
    }

    /// Requests being answered now (`drained`).
    private var answering = 0

    /// Returns once no request is being answered (a `SIGTERM`'s drain: the agent ends when those under
    /// way have their answers), or after `most`; true when none is. Questions on the screen are taken
    /// back first (their programs are refused), so that what is waited for is the work under way: a
    /// renewal cut off after it sent a rotating refresh token, before it kept the new one, would end
    /// the sign-in at the next agent's replay. `most` is that work's own bound, not a question's.
    public func drained(within most: Duration) async -> Bool {
        for pending in asking.values { pending.answer.cancel() }
        let deadline = ContinuousClock.now + most
        while answering > 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return answering == 0
    }

    public init(
        broker: TokenBroker, grants: ProgramGrants, asker: any ConsentAsker, logger: Logger, consentTimeout: Duration = .seconds(120),
        quietAfterDeny: Duration = .seconds(10), leastBeforeRefusal: Duration = .milliseconds(250)
    ) {
        self.quietAfterDeny = quietAfterDeny
        refusals = RefusalLine(quiet: quietAfterDeny, least: leastBeforeRefusal)
        self.broker = broker
        self.grants = grants
        self.asker = asker
        self.logger = logger
        self.consentTimeout = consentTimeout
    }

    /// A token for `caller`, if the person allows it. `stillTheSame` is asked before the token is
    /// handed over: the process may have ended, or exec'd another program, while the person was asked.
    ///
    /// `hangUp`, when the way in can tell, is signalled if the caller goes away meanwhile: a question
    /// still on the screen for it is then taken back.
    public func answer(
        _ request: AgentRequest, from caller: Caller, stillTheSame: @escaping @Sendable () async -> Bool = { true }, hangUp: HangUp? = nil
    ) async -> Result<AgentToken, AgentRefusal> {
        answering += 1
        defer { answering -= 1 }
        // In the program's line from the moment it asks: a refusal before it is allowed is said in turn.
        let ticket = await refusals.enter(caller.program)
        switch await decide(request, from: caller, stillTheSame: stillTheSame, hangUp: hangUp) {
        case .notAllowed(let refusal, _) where !request.interactive:
            await refusals.waitOutOfLine(ticket, hangUp: hangUp)
            return .failure(refusal)
        case .notAllowed(let refusal, let asked):
            await refusals.wait(ticket, hangUp: hangUp, asked: asked)
            return .failure(refusal)
        case .decided(let answer):
            await refusals.leave(ticket)
            return answer
        }
    }

    /// How a request ended: a token, or a refusal to a program that was allowed (signed out, the
    /// provider failed, the program changed meanwhile); or a refusal before it was allowed.
    private enum Decision {
        case decided(Result<AgentToken, AgentRefusal>)
        /// `asked`: after a question the person saw (whose answer took what it took).
        case notAllowed(AgentRefusal, asked: Bool)
    }

    private func decide(
        _ request: AgentRequest, from caller: Caller, stillTheSame: @escaping @Sendable () async -> Bool, hangUp: HangUp?
    ) async -> Decision {
        if let problem = request.scopesProblem { return .notAllowed(AgentRefusal(.invalid, problem), asked: false) }
        // Allowed per account: a program allowed for one person's sign-in is asked again for another's.
        let owner: TokenOwner
        do { owner = try await broker.account(for: request) } catch {
            // Nothing by that name (no such provider, account, issuer, resource): said as a refusal is
            // said, and in turn, so that guessing teaches a program nothing.
            logger.notice(
                "A program asked for something there is none of; refused as any program not allowed is",
                metadata: ["program": "\(caller.program.name)", "why": "\(error.sentence)"])
            let canAsk = request.interactive ? await asker.canAsk : false
            let sentence =
                canAsk
                ? ConsentSentence.notAllowed(caller.program, asked: request) : ConsentSentence.nobodyToAsk(caller, asked: request)
            return .notAllowed(AgentRefusal(request.interactive ? .denied : .needsPerson, sentence), asked: false)
        }
        let provider = (id: owner.accountKey, name: owner.name, person: owner.person)
        let metadata: Logger.Metadata = ["program": "\(caller.program.name)", "provider": "\(provider.id)"]
        // What it asks, within what it was always allowed (asking for no scopes is asking for those): what
        // the person is asked about, what an answer covers, and no wider than what its token carries.
        let wanted =
            grants.grant(for: caller, provider: owner.accountKey, person: owner.person).map { request.narrowing.within($0.narrowing) }
            ?? request.narrowing
        switch await consent(request, wanted, caller, owner, metadata, hangUp) {
        case nil: break
        // Gone before the answer (perhaps to see whether a question showed): in line all the same.
        case (let refusal, let asked)?: return .notAllowed(refusal, asked: asked)
        }
        var allowed = request
        (allowed.scopes, allowed.resource) = (wanted.scopes, wanted.resource)
        // An audience that is a URL is the resource now; another is refused as it was.
        allowed.audience = request.audience.flatMap { AgentRequest.resourceURL($0) == nil ? $0 : nil }
        return .decided(await token(allowed, caller, owner, provider.id, metadata, stillTheSame))
    }

    /// The token, once the person allowed it: checked once more against who is signed in and who asks.
    private func token(
        _ request: AgentRequest, _ caller: Caller, _ owner: TokenOwner, _ provider: String, _ metadata: Logger.Metadata,
        _ stillTheSame: @Sendable () async -> Bool
    ) async -> Result<AgentToken, AgentRefusal> {
        let answer = await broker.token(for: request, of: owner)
        guard case .success = answer else { return answer }
        // The person asked about is the one whose token this is: nobody signed out and another in under
        // the same key while the question was on the screen.
        guard (try? await broker.account(for: request))?.person == owner.person else {
            logger.notice("Someone else signed in to the account while the program waited; no token given", metadata: metadata)
            return .failure(
                AgentRefusal(.denied, "Someone else signed in to \(owner.name) while you were asked; the program gets no token. Ask again.")
            )
        }
        guard await stillTheSame() else {
            logger.notice("The program changed while it waited; no token given", metadata: metadata)
            return .failure(
                AgentRefusal(.denied, "The program that asked ended or became another program while it waited; it gets no token."))
        }
        grants.used(caller.program, provider: provider)
        logger.info("Token given", metadata: metadata)
        return answer
    }

    /// Signs out of `id`'s account in use (or the one `account` names), and forgets every program
    /// allowed for it, kept or while connected: the account's key is the next person's.
    public func signOut(_ id: String, account: String?) async throws(AgentRefusal) -> String? {
        let owner = try await broker.account(for: AgentRequest(target: .provider(id), account: account))
        let warning = try await broker.signOut(id, account: account)
        whileConnected = whileConnected.filter { $0.provider != owner.accountKey }
        do { try grants.forgetAccount(owner.accountKey) } catch {
            logger.warning(
                "The programs allowed for the account could not be forgotten: \(error)", metadata: ["provider": "\(owner.accountKey)"])
        }
        return warning
    }

    /// Nil once the person allowed it (or had always allowed it); else why not, and whether a question was shown.
    private func consent(
        _ request: AgentRequest, _ wanted: Narrowing, _ caller: Caller, _ owner: TokenOwner, _ metadata: Logger.Metadata,
        _ hangUp: HangUp?
    ) async -> (refusal: AgentRefusal, asked: Bool)? {
        let provider = (id: owner.accountKey, name: owner.name, person: owner.person)
        let key = QuestionKey(program: caller.program, provider: provider.id)
        let connection = ConnectionGrant(process: caller.key, provider: provider.id, person: provider.person, narrowing: wanted)
        while true {
            let decision = grants.decision(
                for: caller, provider: provider.id, person: provider.person, asking: wanted, narrows: owner.narrows)
            if decision == .allowed || (caller.program.remoteHost != nil && allowedWhileConnected(connection)) { return nil }
            if !request.interactive { return (unasked(request, caller, metadata), false) }
            let question = self.question(request, wanted, caller, owner, decision)
            if let denied = deniedAt[key], ContinuousClock.now - denied < quietAfterDeny {
                // Asked again right after a Deny: the question waits out the quiet, then is asked afresh.
                logger.info("Asked again right after a Deny; the question waits", metadata: metadata)
                try? await Task.sleep(until: denied + quietAfterDeny, clock: .continuous)
                continue
            }
            if let pending = asking[key] {
                let shared = await pending.answer.value
                // Answered: no longer pending, whoever resumes first.
                if asking[key]?.number == pending.number { asking[key] = nil }
                // The process asked about: its answer, for what it asked and no more. Another, or more: decided
                // afresh. A connection kept across an exec may be the program the process ran before: it is asked
                // about itself, never given the answer about the process's own connection (or the other way).
                guard pending.asker == (caller.asker ?? caller.key), pending.keptAcrossExec == caller.connectionKeptAcrossExec,
                    wanted.isWithin(pending.narrowing)
                else {
                    continue
                }
                if shared == .callerGone, hangUp?.happened != true { continue }  // another connection of it hung up: asked again
                return refusal(for: shared, request, caller, metadata).map { ($0, shared != .nobodyToAsk) }
            }
            // "Always allow" is kept before the answer is known to anyone waiting: they find it in the list.
            let (grants, logger) = (self.grants, self.logger)
            let pending = Task {
                let asked = await ask(question, hangUp: hangUp)
                if asked == .answered(.alwaysAllow), question.offersAlways {
                    do {
                        try grants.allow(
                            caller.program, file: caller.file, provider: provider.id, person: provider.person,
                            scopes: wanted.scopes, resource: wanted.resource, wholeToken: !owner.narrows)
                    } catch {
                        // Allowed all the same, this once: the person said yes.
                        logger.warning("The program is allowed this once: \(error)", metadata: metadata)
                    }
                }
                return asked
            }
            questions += 1
            let number = questions
            asking[key] = (number, caller.asker ?? caller.key, caller.connectionKeptAcrossExec, wanted, pending)
            let answer = await pending.value
            if asking[key]?.number == number { asking[key] = nil }
            if answer == .answered(.allowWhileConnected), question.offersWhileConnected { whileConnected.insert(connection) }
            if answer == .answered(.deny) { deniedAt[key] = ContinuousClock.now }
            return refusal(for: answer, request, caller, metadata).map { ($0, answer != .nobodyToAsk) }
        }
    }

    /// Nobody may be asked (`AgentRequest.interactive`): no question; told out of line (`RefusalLine.waitOutOfLine`).
    private func unasked(_ request: AgentRequest, _ caller: Caller, _ metadata: Logger.Metadata) -> AgentRefusal {
        logger.notice("The program may ask nobody and was not allowed this; refused without a question", metadata: metadata)
        return AgentRefusal(.needsPerson, ConsentSentence.nobodyToAsk(caller, asked: request))
    }

    /// Whether the person allowed `connection`'s ssh process this, or more, while it runs. Ended ssh
    /// processes' answers go; one still running (the same process: its start time) is allowed.
    private func allowedWhileConnected(_ connection: ConnectionGrant) -> Bool {
        whileConnected = whileConnected.filter { ProcessFiles.startTime(of: $0.process.pid, proc: "/proc") == $0.process.started }
        return whileConnected.contains {
            ($0.process, $0.provider, $0.person) == (connection.process, connection.provider, connection.person)
                && connection.narrowing.isWithin($0.narrowing)
        }
    }

    /// What the person is asked: who asks, for which account, what of it, and what it was allowed before.
    private func question(
        _ request: AgentRequest, _ wanted: Narrowing, _ caller: Caller, _ owner: TokenOwner, _ decision: ProgramGrants.Decision
    ) -> ConsentQuestion {
        var question = ConsentQuestion(
            caller: caller, providerID: owner.accountKey, providerName: owner.name, scopes: wanted.scopes,
            applicationHint: request.applicationHint, changed: decision == .changed, personKnown: owner.person != nil)
        (question.resource, question.narrows, question.scopeWords) = (wanted.resource, owner.narrows, owner.scopeWords)
        if decision == .wider {
            question.allowedBefore = grants.grant(for: caller, provider: owner.accountKey, person: owner.person)?.narrowing
        }
        return question
    }

    /// The refusal a program reads: the same for a Deny and for no answer, naming only what it asked.
    private func refusal(for asked: Asked, _ request: AgentRequest, _ caller: Caller, _ metadata: Logger.Metadata) -> AgentRefusal? {
        switch asked {
        case .answered(.allowOnce), .answered(.alwaysAllow), .answered(.allowWhileConnected): return nil
        case .answered(.deny):
            logger.notice("The person refused the program", metadata: metadata)
            return AgentRefusal(.denied, ConsentSentence.notAllowed(caller.program, asked: request))
        case .nobodyToAsk:
            logger.notice("No display to ask on; the program was refused", metadata: metadata)
            return AgentRefusal(.denied, ConsentSentence.nobodyToAsk(caller, asked: request))
        case .noAnswerInTime:
            logger.notice(
                "Nobody answered within \(consentTimeout.components.seconds) seconds; the program was refused", metadata: metadata)
            return AgentRefusal(.denied, ConsentSentence.notAllowed(caller.program, asked: request))
        case .callerGone:
            logger.notice("The program went away before the person answered; the question was taken back", metadata: metadata)
            return AgentRefusal(.failed, "The program that asked went away before you answered; it was given nothing.")
        }
    }

    /// The person's answer, or why there is none: nobody to ask, or nobody answering in time (the
    /// question is then taken back: the asker's task is cancelled, and closes its dialog).
    private func ask(_ question: ConsentQuestion, hangUp: HangUp?) async -> Asked {
        let (asker, timeout) = (self.asker, consentTimeout)
        return await withTaskGroup(of: Asked?.self) { group in
            group.addTask { await asker.ask(question).map(Asked.answered) ?? .nobodyToAsk }
            if let hangUp {
                group.addTask {
                    await hangUp.wait()
                    return Task.isCancelled ? nil : .callerGone
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .noAnswerInTime
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .noAnswerInTime
        }
    }
}
