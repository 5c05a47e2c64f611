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
}
