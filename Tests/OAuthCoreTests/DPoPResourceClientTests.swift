import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// A DPoP-bound access token at a resource (RFC 9449 §7): OAuthCore's own profile request sends it
/// with the DPoP scheme and a proof of the sign-in's key, answers the resource's nonce once (§9), and
/// says a refused proof without losing the sign-in. Against the real latchkey-sandbox.
@Suite struct DPoPResourceClientTests {
    @Test(arguments: [("on", "all", 1), ("nonce", "all", 2), ("on", "refresh", 1), ("nonce", "refresh", 1)])
    func theProfileIsHadWithAProofOfTheKey(mode: String, binds: String, userinfoAsks: Int) async throws {
        let live = try await LiveSandbox(["--dpop", mode, "--dpop-binds", binds]) { $0.dpop = true }
        let session = live.session()
        let token = try await live.signIn(session)
        #expect(token.tokenType == (binds == "all" ? "DPoP" : "Bearer"))
        #expect(ResourceAuthorization.needsProof(token) == (binds == "all"))
        let before = try #require(try await live.sandbox.statistics()["userinfo_requests"])
        let profile = try await live.profiles.fetch(using: session)
        #expect(profile.name == "Ada Lovelace")
        let asked = try #require(try await live.sandbox.statistics()["userinfo_requests"])
        #expect(asked - before == userinfoAsks, "a nonce is asked for once, and only where a proof goes")
        // The nonce is kept for the next proof to that URL: asked no more.
        _ = try await live.profiles.fetch(using: session)
        #expect(try await live.sandbox.statistics()["userinfo_requests"] == asked + 1)
    }

    @Test func aProofTheResourceRefusesIsASentenceAndTheSignInIsKept() async throws {
        let live = try await LiveSandbox(["--dpop", "on"]) { $0.dpop = true }
        var token = try await live.signIn(live.session())
        token.dpopKey = DPoPKey().stored
        _ = try live.store.save(token, for: "sandbox")
        let refusal = await #expect(throws: OAuthError.self) { try await live.profiles.fetch(using: live.session()) }
        guard case .dpopProofRefused(.profile, let description)? = refusal else {
            Issue.record("not a refused proof: \(String(describing: refusal))")
            return
        }
        #expect(description == "The DPoP proof's key is not the one the access token is bound to.")
        #expect("\(refusal!)".contains("Your sign-in is kept"))
        #expect(try live.store.load(for: "sandbox")?.accessToken == token.accessToken, "the sign-in is kept")
    }

    @Test func aBoundTokenWhoseKeyIsGoneIsNeverSent() async throws {
        let token = Token(accessToken: "at", tokenType: "DPoP")
        let url = try #require(URL(string: "https://api.example/me"))
        await #expect(throws: OAuthError.self) { try await ResourceAuthorization.headers(token, method: "GET", url: url) }
        #expect(
            try await ResourceAuthorization.headers(Token(accessToken: "at"), method: "GET", url: url) == ["Authorization": "Bearer at"])
    }

    /// Discovery turns DPoP on where the server takes ES256 proofs, and only there.
    @Test func discoveryTurnsItOnForES256() async throws {
        let on = try await RunningSandbox.start(["--dpop", "on"])
        #expect(try await ProviderDiscovery.providerFile(issuer: on.baseURL).dpop.value == true)
        let off = try await RunningSandbox.start()
        #expect(try await ProviderDiscovery.providerFile(issuer: off.baseURL).dpop.value == nil)
        let issuer = "https://id.example"
        var document: [String: Any] = [
            "issuer": issuer, "authorization_endpoint": "\(issuer)/auth", "token_endpoint": "\(issuer)/token",
            "dpop_signing_alg_values_supported": ["RS256", "PS256"],
        ]
        #expect(try ProviderDiscovery.providerFile(issuer: issuer, document: json(document)).dpop.value == nil)
        document["dpop_signing_alg_values_supported"] = ["RS256", "ES256"]
        #expect(try ProviderDiscovery.providerFile(issuer: issuer, document: json(document)).dpop.value == true)
    }

    /// A pushed request (RFC 9126) names the key too: the page's address carries only the reference.
    @Test func aPushedSignInIsBoundToo() async throws {
        let live = try await LiveSandbox(
            ["--pushed-requests", "required", "--dpop", "nonce"], overrides: ["pushed_authorization_request_endpoint": "/par"],
            adjust: {
                $0.requirePushedAuthorizationRequests = true
                $0.dpop = true
            })
        let agent = FormPostingUserAgent()
        let outcome = try await live.session().signIn(using: agent)
        let key = try #require(outcome.token.dpopKey.flatMap(DPoPKey.init(stored:)))
        #expect(agent.presented?.query?.contains("dpop_jkt") == false)
        let seen = try await HTTPClient().postForm(
            "\(live.sandbox.baseURL)/introspect", [("token", outcome.token.accessToken), ("client_id", live.configuration.clientID)]
        ).json
        #expect((seen["cnf"] as? [String: String])?["jkt"] == key.thumbprint)
    }

    /// A resource that takes DPoP-bound tokens alone challenges with DPoP (RFC 9449 §7.1), as the MCP
    /// conformance suite's server does: its parameters are read as a Bearer challenge's are.
    @Test func aDPoPChallengeIsReadAsABearerOne() throws {
        let dpopOnly = try ResourceChallenge(
            header: #"DPoP resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#)
        #expect(dpopOnly.challenge.is("DPoP") && dpopOnly.challenge["resource_metadata"]?.hasPrefix("https://mcp.example/") == true)
        let both = try ResourceChallenge(header: #"Bearer scope="a b", DPoP algs="ES256", scope="c""#)
        #expect(both.challenge.is("Bearer") && both.scopes == ["a", "b"], "Bearer first, where both are offered")
        #expect(throws: OAuthError.self) { try ResourceChallenge(header: #"Basic realm="x""#) }
    }
}
