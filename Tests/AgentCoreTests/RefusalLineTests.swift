import AgentCore
import Foundation
import OAuthCore
import Synchronization
import TestSupport
import Testing

/// Refusals before a program is allowed are said in its line (`RefusalLine`): their timing, like
/// their words, says nothing of which names exist. The attacker's review of issue 36 sent a burst of
/// guesses with no display: names that exist came back at once, names that do not waited.
@Suite struct RefusalLineTests {
    let existing = AgentRequest(target: .provider("sandbox"))
    func unknown(_ n: Int) -> AgentRequest { AgentRequest(target: .provider("nope\(n)")) }

    func agent(_ home: AgentHome, _ person: ScriptedPerson, quiet: Duration) -> TokenAgent {
        TokenAgent(
            broker: home.broker(), grants: home.grants, asker: person, logger: home.logger, quietAfterDeny: quiet,
            leastBeforeRefusal: .milliseconds(250))
    }

    /// A refusal just spent, without waiting for it: one that hangs up spends its turn at once.
    func spendATurn(_ agent: TokenAgent) async {
        let gone = HangUp()
        gone.signal()
        _ = await agent.answer(unknown(0), from: .thisProcess, hangUp: gone)
    }

    /// With nobody to ask, a name that exists waits its turn behind a refusal just said, as a name
    /// there is none of does.
    @Test(arguments: [true, false])
    func aNameThatExistsWaitsItsTurnAsOneThatDoesNotDoes(existingFirst: Bool) async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let quiet = Duration.milliseconds(600)
        let agent = agent(home, ScriptedPerson(answering: nil), quiet: quiet)
        let (first, second) = existingFirst ? (existing, unknown(1)) : (unknown(1), existing)
        // From the first request's start: its turn came no sooner, and the second's a quiet after it.
        let clock = ContinuousClock()
        let start = clock.now
        #expect((try? await agent.answer(first, from: .thisProcess).get()) == nil)
        #expect((try? await agent.answer(second, from: .thisProcess).get()) == nil)
        #expect(clock.now - start >= quiet, "both answered within \(clock.now - start): the second before its turn")
    }

    /// Whose account a request is for is read from the person's files alone: a provider's first use
    /// (its discovery fetched, its secret read from the keyring) waits until the program is allowed,
    /// so that how long a refusal took says nothing of which providers are set up.
    @Test func findingTheAccountFetchesNothing() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        final class Made: Sendable { let count = Mutex(0) }
        let made = Made()
        let broker = TokenBroker(
            catalog: home.catalog, store: home.store, network: Network(), accounts: home.accounts, zeroConfiguration: nil,
            configure: { id in
                made.count.withLock { $0 += 1 }
                return try home.configuration(id)
            })
        let owner = try await broker.account(for: AgentRequest(target: .provider("sandbox"), account: "ada@sandbox.example"))
        #expect(owner.providerID == "sandbox" && owner.accountKey == "sandbox" && owner.person != nil)
        #expect(made.count.withLock { $0 } == 0, "the provider was made (its discovery fetched) before anyone allowed anything")
        await #expect(throws: AgentRefusal.self) {
            try await broker.account(for: AgentRequest(target: .provider("sandbox"), account: "linus"))
        }
    }

    /// A refusal waiting its turn ends when its caller hangs up: it holds no connection meanwhile.
    @Test func aWaitingRefusalEndsWhenItsCallerHangsUp() async throws {
        let home = try await AgentHome()
        let agent = agent(home, ScriptedPerson(answering: nil), quiet: .seconds(600))
        await spendATurn(agent)
        let hangUp = HangUp()
        let waiting = Task { await agent.answer(unknown(2), from: .thisProcess, hangUp: hangUp) }
        hangUp.signal()
        let clock = ContinuousClock()
        let start = clock.now
        #expect((try? await waiting.value.get()) == nil)
        #expect(clock.now - start < .seconds(300), "it waited out its turn")
    }

    /// At most four of a program's refusals wait in line at once; more are said a quiet after they
    /// came, out of line — never at once, which would let a program that keeps four waiting probe freely.
    /// Counted from before the turn just spent: none can come sooner, however loaded the machine.
    @Test func refusalsPastFourWaitingAreSaidAQuietAfterTheyCame() async throws {
        let home = try await AgentHome()
        let quiet = Duration.seconds(1)
        let agent = agent(home, ScriptedPerson(answering: nil), quiet: quiet)
        let clock = ContinuousClock()
        let before = clock.now
        await spendATurn(agent)
        let requests = (1...6).map { n in
            Task {
                _ = await agent.answer(unknown(n), from: .thisProcess)
                return clock.now - before
            }
        }
        var took: [Duration] = []
        for request in requests { took.append(await request.value) }
        #expect(took.allSatisfy { $0 >= quiet }, "answered before a quiet had passed: \(took)")
    }

    /// A caller that hangs up spends its turn all the same: asking and leaving (to see whether a
    /// question shows) costs what asking and waiting does.
    @Test func aCallerThatHangsUpSpendsItsTurn() async throws {
        let home = try await AgentHome()
        let quiet = Duration.seconds(1)
        let agent = agent(home, ScriptedPerson(answering: nil), quiet: quiet)
        let clock = ContinuousClock()
        let start = clock.now
        _ = await agent.answer(unknown(1), from: .thisProcess)
        let hangUp = HangUp()
        hangUp.signal()
        _ = await agent.answer(unknown(2), from: .thisProcess, hangUp: hangUp)
        _ = await agent.answer(unknown(3), from: .thisProcess)
        #expect(clock.now - start >= quiet * 1.8, "the third came one quiet after the first: \(clock.now - start)")
    }

    /// Callers that hang up spend turns, but push the line back no further than a full line would
    /// (four quiets): a program cannot make another's refusals, or a person's Deny, wait for hours.
    @Test func hangUpsPushTheLineBackNoFurtherThanAFullLine() async throws {
        let home = try await AgentHome()
        let quiet = Duration.seconds(1)
        let agent = agent(home, ScriptedPerson(answering: nil), quiet: quiet)
        for _ in 0..<20 { await spendATurn(agent) }
        let clock = ContinuousClock()
        let start = clock.now
        _ = await agent.answer(unknown(1), from: .thisProcess)
        #expect(clock.now - start < quiet * 12, "twenty hang-ups pushed the line back \(clock.now - start)")
    }

    /// The same, for callers that hang up only once their turn is set (while they wait for it): no
    /// turn is ever set further off than a full line's.
    @Test func hangingUpWhileWaitingPushesTheLineBackNoFurther() async throws {
        let home = try await AgentHome()
        let quiet = Duration.seconds(1)
        let agent = agent(home, ScriptedPerson(answering: nil), quiet: quiet)
        for n in 0..<20 {
            let hangUp = HangUp()
            let waiting = Task { await agent.answer(unknown(n), from: .thisProcess, hangUp: hangUp) }
            // Long enough, on most machines, for its turn to be set; sooner only makes this the case above.
            try await Task.sleep(for: .milliseconds(50))
            hangUp.signal()
            _ = await waiting.value
        }
        let clock = ContinuousClock()
        let start = clock.now
        _ = await agent.answer(unknown(99), from: .thisProcess)
        #expect(clock.now - start < quiet * 12, "twenty callers that left pushed the line back \(clock.now - start)")
    }

    /// A program allowed what it asks is never held behind its own refusals waiting their turn.
    @Test func anAllowedRequestIsNotHeldBehindRefusals() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let agent = agent(home, ScriptedPerson(answering: .alwaysAllow), quiet: .seconds(600))
        _ = try await agent.answer(existing, from: .thisProcess).get()
        await spendATurn(agent)
        let hangUp = HangUp()
        let waiting = Task { await agent.answer(unknown(2), from: .thisProcess, hangUp: hangUp) }
        defer { hangUp.signal() }
        let clock = ContinuousClock()
        let start = clock.now
        #expect((try? await agent.answer(existing, from: .thisProcess).get()) != nil)
        #expect(clock.now - start < .seconds(300), "the allowed request waited behind a refusal")
        hangUp.signal()
        _ = await waiting.value
    }

    /// Out of line (nobody may be asked): a burst of a program's refusals is answered a `least` apart,
    /// and past 16 waiting, a quiet after each came; not all at once whatever their number.
    @Test func refusalsOutOfLineAreSpacedAndCapped() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let agent = TokenAgent(
            broker: home.broker(), grants: home.grants, asker: ScriptedPerson(answering: .allowOnce), logger: home.logger,
            quietAfterDeny: .seconds(3), leastBeforeRefusal: .milliseconds(100))
        var unasked = unknown(1)
        unasked.interactive = false
        let request = unasked
        let clock = ContinuousClock()
        let start = clock.now
        let ended = await withTaskGroup(of: Duration.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    _ = await agent.answer(request, from: .thisProcess)
                    return clock.now - start
                }
            }
            return await group.reduce(into: [Duration]()) { $0.append($1) }.sorted()
        }
        // Eight turns a tenth of a second apart: the last no sooner than 0.8 s after the burst.
        #expect(ended.last! >= .milliseconds(800), "\(ended)")
    }
}
