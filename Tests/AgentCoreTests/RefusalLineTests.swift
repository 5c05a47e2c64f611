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
            leastBeforeRefusal: .zero)
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
        #expect((try? await agent.answer(first, from: .thisProcess).get()) == nil)
        let clock = ContinuousClock()
        let start = clock.now
        #expect((try? await agent.answer(second, from: .thisProcess).get()) == nil)
        #expect(clock.now - start >= quiet * 0.9, "answered after \(clock.now - start), before its turn")
    }

    /// A refusal waiting its turn ends when its caller hangs up: it holds no connection meanwhile.
    @Test func aWaitingRefusalEndsWhenItsCallerHangsUp() async throws {
        let home = try await AgentHome()
        let agent = agent(home, ScriptedPerson(answering: nil), quiet: .seconds(600))
        _ = await agent.answer(unknown(1), from: .thisProcess)
        let hangUp = HangUp()
        let waiting = Task { await agent.answer(unknown(2), from: .thisProcess, hangUp: hangUp) }
        hangUp.signal()
        let clock = ContinuousClock()
        let start = clock.now
        #expect((try? await waiting.value.get()) == nil)
        #expect(clock.now - start < .seconds(300), "it waited out its turn")
    }

    /// At most four of a program's refusals wait at once; more are said at once, whatever they were for.
    @Test func atMostFourRefusalsOfAProgramWait() async throws {
        let home = try await AgentHome()
        let agent = agent(home, ScriptedPerson(answering: nil), quiet: .seconds(600))
        _ = await agent.answer(unknown(0), from: .thisProcess)
        final class Count: Sendable { let value = Mutex(0) }
        let count = Count()
        let hangUps = (1...6).map { _ in HangUp() }
        let requests = (1...6).map { n in
            Task {
                _ = await agent.answer(unknown(n), from: .thisProcess, hangUp: hangUps[n - 1])
                count.value.withLock { $0 += 1 }
            }
        }
        try await waitUntil { count.value.withLock { $0 } >= 2 }
        #expect(count.value.withLock { $0 } == 2, "two said at once, four waiting")
        for hangUp in hangUps { hangUp.signal() }
        for request in requests { await request.value }
        #expect(count.value.withLock { $0 } == 6)
    }

    /// A program allowed what it asks is never held behind its own refusals waiting their turn.
    @Test func anAllowedRequestIsNotHeldBehindRefusals() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let agent = agent(home, ScriptedPerson(answering: .alwaysAllow), quiet: .seconds(600))
        _ = try await agent.answer(existing, from: .thisProcess).get()
        _ = await agent.answer(unknown(1), from: .thisProcess)
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
}
