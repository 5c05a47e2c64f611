import AgentCore
import Foundation
import OAuthCore
import TestSupport
import Testing

/// A program handed a token bound to the sign-in's DPoP key (RFC 9449) gets, beside it, a proof for
/// the request it names, signed by the agent with the key the program never sees; the proof is for
/// that token alone, and the real sandbox's resources take it once.
@Suite struct AgentProofTests {
    func agent(_ home: AgentHome) -> TokenAgent {
        TokenAgent(broker: home.broker(), grants: home.grants, asker: ScriptedPerson(answering: .alwaysAllow), logger: home.logger)
    }

    func get(_ url: URL, _ token: AgentToken) async throws -> Reply {
        try await HTTPClient().get(
            url.absoluteString, headers: ["Authorization": "DPoP \(token.accessToken)", "DPoP": token.proof ?? ""])
    }

    @Test func aNarrowedTokensProofIsTakenByItsResourceOnce() async throws {
        let home = try await AgentHome(sandbox: ["--dpop", "on"], dpop: true)
        let signedIn = try await home.signIn()
        #expect(signedIn.tokenType == "DPoP")
        let open = try #require(URL(string: home.sandbox.baseURL + "/api/open"))
        let asked = AgentRequest(target: .provider("sandbox"), resource: open, proof: .init(method: "GET", url: open))
        let token = try await agent(home).answer(asked, from: .thisProcess).get()
        #expect(token.needsProof && token.accessToken != signedIn.accessToken)
        let answered = try await get(open, token)
        #expect(answered.status == 200 && answered.json["resource"] as? String == open.absoluteString)
        #expect(try await get(open, token).status == 401, "a proof is good once")
        // The key stays: the proof carries its public half alone, and nothing printed names the private one.
        let key = try #require(signedIn.dpopKey)
        let encoded = try #require(token.proof?.split(separator: ".").first).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        let header = try #require(Data(base64Encoded: encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)))
        let jwk = (try JSONSerialization.jsonObject(with: header) as? [String: Any])?["jwk"] as? [String: String]
        #expect(jwk?["kty"] == "EC" && jwk?["d"] == nil)
        #expect(!"\(token)".contains(key) && !"\(token)".contains(token.proof!))
    }

    @Test func theSignInsOwnTokenIsProvedAtUserInfo() async throws {
        let home = try await AgentHome(sandbox: ["--dpop", "on"], dpop: true)
        try await home.signIn()
        let userinfo = try #require(URL(string: home.sandbox.baseURL + "/userinfo"))
        let token = try await agent(home).answer(
            AgentRequest(target: .provider("sandbox"), proof: .init(method: "GET", url: userinfo)), from: .thisProcess
        ).get()
        #expect(try await get(userinfo, token).json["sub"] != nil)
    }

    @Test func aBearerTokenComesWithoutAProof() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let userinfo = try #require(URL(string: home.sandbox.baseURL + "/userinfo"))
        let token = try await agent(home).answer(
            AgentRequest(target: .provider("sandbox"), proof: .init(method: "GET", url: userinfo)), from: .thisProcess
        ).get()
        #expect(token.tokenType == "Bearer" && token.proof == nil && !token.needsProof)
    }

    /// No proof for the provider's own endpoints (with one, a program could exchange or refresh as Latchkey),
    /// none outside the resource a token was narrowed to, none for plain http off this computer.
    @Test func noProofIsSignedWhereItWouldGiveMoreThanTheToken() async throws {
        let home = try await AgentHome(sandbox: ["--dpop", "on"], dpop: true)
        try await home.signIn()
        let agent = agent(home)
        let base = home.sandbox.baseURL
        let open = try #require(URL(string: base + "/api/open"))
        let refusals: [(URL, URL?, String)] = [
            (URL(string: base + "/token")!, nil, "own endpoints"),
            (URL(string: base.replacingOccurrences(of: "http://", with: "HTTP://") + "/token?x=1#f")!, nil, "own endpoints"),
            (URL(string: base + "/api/notes")!, open, "alone"),
            (URL(string: "http://api.example/notes")!, nil, "https"),
            (URL(string: base.replacingOccurrences(of: "http://", with: "http://ada:pw@") + "/userinfo")!, nil, "user name"),
        ]
        for (url, resource, words) in refusals {
            let asked = AgentRequest(target: .provider("sandbox"), resource: resource, proof: .init(method: "POST", url: url))
            guard case .failure(let refusal) = await agent.answer(asked, from: .thisProcess) else {
                Issue.record("a proof for \(url) was signed")
                continue
            }
            #expect(refusal.kind == .invalid && refusal.sentence.contains(words), "\(url): \(refusal.sentence)")
        }
        let under = AgentRequest(target: .provider("sandbox"), resource: open, proof: .init(method: "GET", url: open))
        #expect(try await agent.answer(under, from: .thisProcess).get().proof != nil)
    }
}
