import AgentCore
import Foundation
import OAuthCore
import TestSupport
import Testing

/// Issue 40 §3: a program that says nobody may be asked (`AgentRequest.interactive` false) is
/// never shown to the person: allowed, it gets its token; not allowed, it is told so a quarter of a
/// second after it asked, behind nothing else of the program's (`RefusalLine.waitOutOfLine`), in
/// words that are the same whether or not there is such a sign-in.
@Suite struct NoInteractionTests {
    func request(_ target: AgentRequest.Target = .provider("sandbox"), account: String? = nil) -> AgentRequest {
        var request = AgentRequest(target: target, account: account, applicationHint: "a CI job")
        request.interactive = false
        return request
    }

    @Test func aProgramNotAllowedIsToldAtOnceAndNobodyIsAsked() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        // Someone would answer, and would allow it: nobody is asked all the same.
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = TokenAgent(broker: home.broker(), grants: home.grants, asker: person, logger: home.logger)
        let me = Caller.thisProcess
        let answer = await agent.answer(request(), from: me)
        #expect(answer == .failure(AgentRefusal(.needsPerson, ConsentSentence.nobodyToAsk(me, asked: request()))))
        #expect(person.questions.isEmpty, "a question was shown")
        #expect(home.grants.all.isEmpty, "something was kept")
        let sentence = ConsentSentence.nobodyToAsk(me, asked: request())
        #expect(
            sentence.contains("it may ask nobody (--no-interaction")
                && sentence.hasSuffix("latchkey agent allow \(me.program.path) sandbox"))
    }

    @Test func aProgramAllowedBeforehandGetsItsTokenWithoutAQuestion() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = TokenAgent(broker: home.broker(), grants: home.grants, asker: person, logger: home.logger)
        _ = try await agent.answer(AgentRequest(target: .provider("sandbox")), from: .thisProcess).get()
        let token = try await agent.answer(request(), from: .thisProcess).get()
        #expect(!token.accessToken.isEmpty && person.questions.count == 1, "asked again")
    }

    /// What there is none of is refused in the same words and with the same kind: a program learns
    /// nothing by asking without interaction.
    @Test func whatThereIsNoneOfIsRefusedInTheSameWords() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let agent = TokenAgent(
            broker: home.broker(), grants: home.grants, asker: ScriptedPerson(answering: .allowOnce), logger: home.logger,
            quietAfterDeny: .milliseconds(300))
        let me = Caller.thisProcess
        for asked in [
            request(), request(.provider("nope")), request(account: "linus@sandbox.example"), request(.issuer("https://nowhere.example")),
        ] {
            #expect(
                await agent.answer(asked, from: me) == .failure(AgentRefusal(.needsPerson, ConsentSentence.nobodyToAsk(me, asked: asked))))
        }
    }

    /// Not held behind a question on the screen for another request of the program, nor a quiet
    /// behind its last refusal: told before the person answers that question.
    @Test func neitherAQuestionOnTheScreenNorAnEarlierRefusalHoldsIt() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .allowOnce, holds: true)
        let agent = TokenAgent(
            broker: home.broker(), grants: home.grants, asker: person, logger: home.logger, quietAfterDeny: .seconds(3600))
        async let asking = agent.answer(AgentRequest(target: .provider("sandbox")), from: .thisProcess)
        while person.questions.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        for _ in 0..<3 {
            let told = await agent.answer(request(), from: .thisProcess)
            guard case .failure(let refusal) = told else { return #expect(Bool(false), "a token without the person's say") }
            #expect(refusal.kind == .needsPerson)
        }
        #expect(person.questions.count == 1, "asked again")
        person.release()
        #expect((try? await asking.get()) != nil, "the person's answer to the question on the screen")
    }
}
