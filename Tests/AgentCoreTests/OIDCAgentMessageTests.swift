import AgentCore
import Foundation
import OAuthCore
import Testing

/// oidc-agent's requests and answers, byte for byte as oidc-token 4.2.6 sends and reads them.
@Suite struct OIDCAgentMessageTests {
    func request(_ text: String) -> Result<AgentRequest, AgentRefusal> { OIDCAgentMessage.request(Array(text.utf8)) }

    @Test func oidcTokensRequestWithEveryOptionIsRead() throws {
        let text =
            #"{"request":"access_token","min_valid_period":120,"account":"github","scope":"openid profile email","application_hint":"myapp","audience":"foo bar"}"#
        let asked = try request(text).get()
        #expect(asked.target == .provider("github"))
        #expect(asked.minimumValidity == 120)
        #expect(asked.scopes == ["openid", "profile", "email"])
        #expect(asked.audience == "foo bar")
        #expect(asked.applicationHint == "myapp")
    }

    @Test func anAccountOfAProviderIsNamedAfterASlash() throws {
        let asked = try request(#"{"request":"access_token","account":"github/ada@work.example"}"#).get()
        #expect(asked.target == .provider("github") && asked.account == "ada@work.example")
        let plain = try request(#"{"request":"access_token","account":"github/"}"#).get()
        #expect(plain.target == .provider("github") && plain.account == nil)
    }

    /// Latchkey's own commands send an account as oidc-agent names it (found by the e2e accounts_git:
    /// the git helper's account was lost on the way to the agent, which gave the one in use).
    @Test func anAccountAskedForByLatchkeysOwnCommandsReachesTheAgent() throws {
        let asked = AgentRequest(target: .provider("github"), account: "ada@work.example", minimumValidity: 300)
        #expect(try request(OIDCAgentMessage.encode(asked)).get() == asked)
    }

    @Test func anIssuerAndForcedRenewalAreRead() throws {
        let asked = try request(
            #"{"request":"access_token","min_valid_period":-1,"issuer":"https://id.example/","application_hint":"oidc-token"}"#
        ).get()
        #expect(asked.target == .issuer("https://id.example/"))
        #expect(asked.minimumValidity == AgentRequest.renewNow)
        #expect(asked.scopes.isEmpty && asked.audience == nil)
    }

    @Test(arguments: [
        (#"not json"#, "The request is not a JSON object."),
        (#"[1]"#, "The request is not a JSON object."),
        (#"{"account":"github"}"#, "The request names no \"request\"."),
        (
            #"{"request":"access_token"}"#,
            "Name either an account (a provider's id, or provider/account) or an issuer, not both and not neither."
        ),
        (
            #"{"request":"access_token","account":"a","issuer":"https://b"}"#,
            "Name either an account (a provider's id, or provider/account) or an issuer, not both and not neither."
        ),
        (
            #"{"request":"access_token","account":"a","min_valid_period":"60"}"#,
            "\"min_valid_period\" must be a whole number of seconds from -1 to 86400."
        ),
        (
            #"{"request":"access_token","account":"a","min_valid_period":1e9}"#,
            "\"min_valid_period\" must be a whole number of seconds from -1 to 86400."
        ),
        (#"{"request":"access_token","account":""}"#, "\"account\" must be a non-empty string of at most 2048 bytes."),
        (#"{"request":"access_token","account":7}"#, "\"account\" must be a non-empty string of at most 2048 bytes."),
        (
            #"{"request":"access_token","account":"a","dpop_url":"https://api.example/x"}"#,
            "A DPoP proof is asked for with both \"dpop_method\" and \"dpop_url\"."
        ),
        (
            #"{"request":"access_token","account":"a","dpop_method":"get","dpop_url":"https://api.example/x"}"#,
            "A DPoP proof's method is an HTTP method in capitals (GET, POST, …)."
        ),
        (
            #"{"request":"access_token","account":"a","dpop_method":"GET","dpop_url":"file:///etc/passwd"}"#,
            "A DPoP proof's URL is an absolute https URL (http only on this computer), without a user name or password."
        ),
        (
            #"{"request":"access_token","account":"a","dpop_method":"GET","dpop_url":"https://a.example/","dpop_nonce":"a\"b"}"#,
            "A DPoP nonce is what the resource sent in its DPoP-Nonce header: up to 1024 visible ASCII characters."
        ),
        (#"{"request":"access_token","account":"a","interactive":"no"}"#, "\"interactive\" must be true or false."),
    ])
    func aMalformedRequestIsRefusedInASentence(_ text: String, _ sentence: String) {
        #expect(request(text) == .failure(AgentRefusal(.invalid, sentence)))
    }

    @Test func anotherKindOfRequestIsNamedInTheRefusal() {
        guard case .failure(let refusal) = request(#"{"request":"add","config":"…"}"#) else {
            Issue.record("an add request was taken")
            return
        }
        #expect(refusal.sentence.hasPrefix("Latchkey's agent answers \"access_token\" requests only, not \"add\""))
    }

    @Test func latchkeysOwnRequestsReadBackAsSent() throws {
        let requests = [
            AgentRequest(
                target: .provider("github"), minimumValidity: 300, scopes: ["repo", "read:user"], applicationHint: "latchkey token"),
            AgentRequest(target: .resource(URL(string: "https://mcp.example/mcp")!), minimumValidity: AgentRequest.renewNow),
            AgentRequest(target: .issuer("https://id.example"), audience: "api"),
            AgentRequest(
                target: .provider("mine"), applicationHint: "latchkey curl",
                proof: .init(method: "POST", url: URL(string: "https://api.example/notes?x=1")!, nonce: "n-1")),
        ]
        var mayAskNobody = AgentRequest(target: .provider("mine"), applicationHint: "git")
        mayAskNobody.interactive = false
        #expect(OIDCAgentMessage.encode(mayAskNobody).contains(#""interactive":false"#))
        for request in requests + [mayAskNobody] {
            #expect(try OIDCAgentMessage.request(Array(OIDCAgentMessage.encode(request).utf8)).get() == request)
        }
    }

    @Test func answersAreTheJSONOidcTokenReads() throws {
        let token = AgentToken(
            accessToken: "tok\"en", tokenType: "Bearer", expiresAt: Date(timeIntervalSince1970: 1_795_692_668),
            scopes: ["openid", "email"], provider: "github", issuer: "https://id.example")
        let success = try JSONSerialization.jsonObject(with: Data(OIDCAgentMessage.success(token).utf8)) as? [String: Any]
        #expect(success?["status"] as? String == "success")
        #expect(success?["access_token"] as? String == "tok\"en")
        #expect(success?["issuer"] as? String == "https://id.example")
        #expect((success?["expires_at"] as? NSNumber)?.intValue == 1_795_692_668)
        #expect(success?["scope"] as? String == "openid email")
        #expect(success?["dpop_proof"] == nil, "a proof only where one was made")
        var proved = token
        (proved.tokenType, proved.proof) = ("DPoP", "a.b.c")
        #expect(try OIDCAgentMessage.answer(Array(OIDCAgentMessage.success(proved).utf8)).get().proof == "a.b.c")
        let failure = try JSONSerialization.jsonObject(with: Data(OIDCAgentMessage.failure(AgentRefusal(.denied, "No.")).utf8))
        #expect((failure as? [String: String])?["error"] == "No.", "oidc-token tells failure by \"error\"")
        #expect(
            OIDCAgentMessage.answer(Array(OIDCAgentMessage.failure(AgentRefusal(.denied, "No.")).utf8))
                == .failure(AgentRefusal(.denied, "No.")))
    }
}
