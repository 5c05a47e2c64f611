import AgentCore
import Foundation
import Logging
import OAuthCore
import TestSupport
import Testing

/// Issue 38: a program gets what it was allowed and no more, against a real sandbox whose
/// introspection (RFC 7662) says what each token handed out can do.
@Suite struct LeastPrivilegeTests {
    func agent(_ home: AgentHome, _ person: ScriptedPerson) -> TokenAgent {
        TokenAgent(broker: home.broker(), grants: home.grants, asker: person, logger: home.logger)
    }

    /// Waits for `condition`, failing the test past a minute (never a fixed sleep for an event).
    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "waited a minute")
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func scopes(of token: AgentToken, _ home: AgentHome) async throws -> Set<String> {
        let seen = try await HTTPClient().postForm(
            "\(home.sandbox.baseURL)/introspect", [("token", token.accessToken), ("client_id", "latchkey-desktop")]
        ).json
        #expect(seen["active"] as? Bool == true)
        return Set(((seen["scope"] as? String) ?? "").split(separator: " ").map(String.init))
    }

    @Test func aProgramAllowedSomeScopesGetsATokenForThoseAloneAndIsAskedAgainForMore() async throws {
        let home = try await AgentHome()
        let signedIn = try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = agent(home, person)
        let email = AgentRequest(target: .provider("sandbox"), scopes: ["email"], applicationHint: "a test")
        let token = try await agent.answer(email, from: .thisProcess).get()
        #expect(token.accessToken != signedIn.accessToken)
        #expect(try await scopes(of: token, home) == ["email"])
        #expect(token.scopes == ["email"])
        let question = try #require(person.questions.first)
        #expect(question.scopes == ["email"] && question.narrows && question.scopeWords["email"] == "read your e-mail address")
        #expect(home.grants.all.first?.scopes == ["email"], "the grant records what was allowed")

        // Asking without scopes is asking for what it was allowed: the same narrowed token, not asked again.
        let plain = try await agent.answer(AgentRequest(target: .provider("sandbox")), from: .thisProcess).get()
        #expect(plain.accessToken == token.accessToken && person.questions.count == 1)
        #expect(try await scopes(of: plain, home) == ["email"])

        // More than allowed: asked again, the question saying what was allowed before.
        let more = try await agent.answer(
            AgentRequest(target: .provider("sandbox"), scopes: ["email", "profile"]), from: .thisProcess
        ).get()
        #expect(person.questions.count == 2)
        #expect(person.questions.last?.allowedBefore == Narrowing(scopes: ["email"]))
        #expect(try await scopes(of: more, home) == ["email", "profile"])
        #expect(try home.store.load(for: "sandbox")?.accessToken == signedIn.accessToken, "the sign-in keeps its own token")
    }

    @Test func aRefreshTokenNeverLeavesAndOneRenewalServesManyCallersOfANarrowing() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let agent = agent(home, ScriptedPerson(answering: .alwaysAllow))
        let email = AgentRequest(target: .provider("sandbox"), scopes: ["email"])
        _ = try await agent.answer(email, from: .thisProcess).get()
        let tokens = try await withThrowingTaskGroup(of: AgentToken.self) { group in
            for index in 0..<32 {
                group.addTask {
                    try await agent.answer(index.isMultiple(of: 2) ? email : AgentRequest(target: .provider("sandbox")), from: .thisProcess)
                        .get()
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(tokens.map(\.accessToken)).count == 1)
        #expect(try await home.sandbox.statistics()["token_exchanges"] == 1, "one exchange for every caller")
        #expect("\(tokens[0])".contains("Bearer") && !"\(tokens[0])".contains(tokens[0].accessToken))
    }

    /// A question on the screen covers what it asks: a request for more from the same process, meanwhile,
    /// is asked about afresh once it is answered, never handed the first answer.
    @Test func anAnswerCoversWhatItWasAskedForAndNoMore() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .allowOnce, holds: true)
        let agent = agent(home, person)
        let narrow = Task { await agent.answer(AgentRequest(target: .provider("sandbox"), scopes: ["email"]), from: .thisProcess) }
        try await waitUntil { !person.questions.isEmpty }
        let wide = Task { await agent.answer(AgentRequest(target: .provider("sandbox")), from: .thisProcess) }
        // Time for the wide request to reach the question on the screen: the test holds either way (a later
        // request is asked afresh too), and this makes it the case of a request sharing a pending answer.
        try await Task.sleep(for: .milliseconds(200))
        person.release()
        let first = try await narrow.value.get()
        #expect(try await scopes(of: first, home) == ["email"])
        try await waitUntil { person.questions.count == 2 }
        #expect(person.questions.last?.scopes == [], "asked afresh, for the whole sign-in")
        person.release()
        let second = try await wide.value.get()
        #expect(try await scopes(of: second, home) == ["openid", "profile", "email", "offline_access"])
    }

    @Test func aScopeThatIsNoScopeIsRefusedWithoutAQuestion() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let refused = await agent(home, person).answer(
            AgentRequest(target: .provider("sandbox"), scopes: ["email\u{1b}[2J"]), from: .thisProcess)
        guard case .failure(let refusal) = refused else { return #expect(Bool(false)) }
        #expect(refusal.kind == .invalid && refusal.sentence.contains("is not a scope") && !refusal.sentence.contains("\u{1b}"))
        #expect(person.questions.isEmpty)
    }

    @Test func aProviderThatCannotNarrowIsSaidInTheQuestionAndGivesTheWholeToken() async throws {
        let home = try await AgentHome(sandbox: ["--narrowing", "none"])
        try FileManager.default.createDirectory(at: home.root.appendingPathComponent("config"), withIntermediateDirectories: true)
        try Data(#"{"narrowing": "none"}"#.utf8).write(to: home.root.appendingPathComponent("config/sandbox.json"))
        let signedIn = try await home.signIn()
        let person = ScriptedPerson(answering: .allowOnce)
        let token = try await agent(home, person).answer(
            AgentRequest(target: .provider("sandbox"), scopes: ["email"]), from: .thisProcess
        ).get()
        #expect(person.questions.first?.narrows == false)
        #expect(token.accessToken == signedIn.accessToken, "the whole token, as the question said")
        #expect(try await home.sandbox.statistics()["refresh_grants"] == 0)
    }

    /// A program allowed one scope while its provider could narrow is asked again once the provider file
    /// says it cannot: it would get the whole token now, and the person allowed less.
    @Test func aGrantOfSomeScopesIsAskedAgainOnceItsProviderCannotNarrow() async throws {
        let home = try await AgentHome()
        let signedIn = try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = agent(home, person)
        let email = AgentRequest(target: .provider("sandbox"), scopes: ["email"])
        _ = try await agent.answer(email, from: .thisProcess).get()
        _ = try await agent.answer(email, from: .thisProcess).get()
        #expect(person.questions.count == 1)
        try Data(#"{"narrowing": "none"}"#.utf8).write(to: home.root.appendingPathComponent("config/sandbox.json"))
        let whole = try await agent.answer(email, from: .thisProcess).get()
        #expect(person.questions.count == 2 && person.questions.last?.narrows == false, "asked again, told it is the whole token")
        #expect(whole.accessToken == signedIn.accessToken && home.grants.all.first?.wholeToken == true)
        _ = try await agent.answer(email, from: .thisProcess).get()
        #expect(person.questions.count == 2, "allowed so, not asked again")
    }

    @Test func anAudienceThatIsAURLNarrowsAndAnotherIsRefused() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let agent = agent(home, ScriptedPerson(answering: .allowOnce))
        let api = "\(home.sandbox.baseURL)/api/open"
        let token = try await agent.answer(
            AgentRequest(target: .provider("sandbox"), scopes: ["profile"], audience: api), from: .thisProcess
        ).get()
        let seen = try await HTTPClient().postForm(
            "\(home.sandbox.baseURL)/introspect", [("token", token.accessToken), ("client_id", "latchkey-desktop")]
        ).json
        #expect(seen["aud"] as? String == api)
        let reply = try await HTTPClient().get(api, headers: ["Authorization": "Bearer \(token.accessToken)"])
        #expect(reply.status == 200, "the resource takes it")
        let refused = await agent.answer(AgentRequest(target: .provider("sandbox"), audience: "kubernetes"), from: .thisProcess)
        guard case .failure(let refusal) = refused else { return #expect(Bool(false)) }
        #expect(refusal.kind == .invalid && refusal.sentence.contains("resource's URL"))
    }
}
