import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// OAuthCore's DPoP client (RFC 9449) against the real latchkey-sandbox as a DPoP server: the key
/// made at the sign-in's start named in the authorization request, a proof at every token request,
/// the tokens bound to the key (as the sandbox's introspection says), nonces answered once.
@Suite struct DPoPClientTests {
    func introspect(_ live: LiveSandbox, _ token: Token) async throws -> [String: Any] {
        try await HTTPClient().postForm(
            "\(live.sandbox.baseURL)/introspect", [("token", token.accessToken), ("client_id", live.configuration.clientID)]
        ).json
    }

    @Test(arguments: ["on", "nonce"])
    func aSignInIsBoundToItsKeyAndRenewsWithIt(mode: String) async throws {
        let live = try await LiveSandbox(["--dpop", mode]) { $0.dpop = true }
        let token = try await live.signIn(live.session())
        let key = try #require(token.dpopKey.flatMap(DPoPKey.init(stored:)))
        #expect(token.tokenType == "DPoP")
        let seen = try await introspect(live, token)
        #expect((seen["cnf"] as? [String: String])?["jkt"] == key.thumbprint)
        #expect(try live.store.load(for: "sandbox")?.dpopKey == token.dpopKey, "the key is kept with the sign-in")

        // A new process: the key is read back with the sign-in, and the renewal proves it.
        let renewed = try await live.session().renewedToken()
        #expect(renewed.accessToken != token.accessToken && renewed.dpopKey == token.dpopKey && renewed.tokenType == "DPoP")
        #expect((try await introspect(live, renewed)["cnf"] as? [String: String])?["jkt"] == key.thumbprint)
        // A copy of the refresh token without the key is worthless.
        #expect(try await live.refreshStatus(try #require(renewed.refreshToken)) == "invalid_dpop_proof")
        #expect(String(describing: renewed).contains(renewed.dpopKey!) == false, "the key is never shown")
    }

    /// A sign-in on another device proves a key of its own at every poll, and is bound to it.
    @Test func aSignInOnAnotherDeviceIsBoundToo() async throws {
        let live = try await LiveSandbox(["--dpop", "nonce", "--device-interval", "1"]) { $0.dpop = true }
        let client = live.tokenClient()
        let authorization = try await client.startDeviceAuthorization()
        let answered = try await HTTPClient().postForm(
            "\(live.sandbox.baseURL)/device",
            [("user_code", authorization.userCode), ("username", "ada"), ("password", "engine"), ("action", "allow")])
        #expect(answered.status == 200)
        let token = try await client.deviceToken(for: authorization)
        let key = try #require(token.dpopKey.flatMap(DPoPKey.init(stored:)))
        #expect(token.tokenType == "DPoP")
        #expect((try await introspect(live, token)["cnf"] as? [String: String])?["jkt"] == key.thumbprint)
    }

    @Test func aNarrowedTokenIsHadWithAProofAndCarriesNoKey() async throws {
        let live = try await LiveSandbox(["--dpop", "nonce"]) { $0.dpop = true }
        let session = live.session()
        _ = try await live.signIn(session)
        let narrowed = try await session.narrowedToken(Narrowing(scopes: ["email"]))
        #expect(narrowed.dpopKey == nil && narrowed.tokenType == "DPoP")
        #expect(try await introspect(live, narrowed)["scope"] as? String == "email")
    }

    /// A sign-in whose key cannot be read is said as such, and kept; a token said to be bound when no key
    /// was proved is refused.
    @Test func anUnreadableKeyIsASentenceAndAnUnprovedBindingIsRefused() async throws {
        let live = try await LiveSandbox(["--dpop", "on"]) { $0.dpop = true }
        var token = try await live.signIn(live.session())
        token.dpopKey = "damaged"
        _ = try live.store.save(token, for: "sandbox")
        let refusal = await #expect(throws: OAuthError.self) { try await live.session().renewedToken() }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("DPoP key could not be read"))
        #expect(try live.store.load(for: "sandbox")?.accessToken == token.accessToken, "the sign-in is kept")
        #expect(throws: OAuthError.self) { try TokenClient.checkBinding(Token(accessToken: "a", tokenType: "DPoP"), proved: nil) }
        #expect(throws: Never.self) { try TokenClient.checkBinding(Token(accessToken: "a", tokenType: "DPoP"), proved: DPoPKey()) }
    }

    @Test func aProofIsWhatTheSandboxChecks() async throws {
        let key = DPoPKey()
        let url = try #require(URL(string: "https://ada:pw@as.example/token?x=1#f"))
        let proof = try await key.proof(method: "POST", url: url, nonce: "n-1", accessToken: "at")
        let parts = proof.split(separator: ".")
        #expect(parts.count == 3)
        let claims = try JSONValue(parsing: Array(try #require(Base64URL.decode(parts[1]))))
        #expect(claims["htu"]?.string == "https://as.example/token" && claims["htm"]?.string == "POST")
        #expect(claims["nonce"]?.string == "n-1" && claims["ath"]?.string?.isEmpty == false)
        #expect(DPoPKey(stored: key.stored)?.thumbprint == key.thumbprint)
        #expect(DPoPKey(stored: "not a key") == nil)
        let header = try JSONValue(parsing: Array(try #require(Base64URL.decode(parts[0]))))
        #expect(header["jwk"]?["d"] == nil, "never the private key")
    }
}
