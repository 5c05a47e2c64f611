import Foundation
import TestSupport
import Testing

/// A narrower token than the grant: by refresh (RFC 6749 §6, RFC 8707 §2.2), by token exchange
/// (RFC 8693), or not at all, as the sandbox is told; what each token can do, by introspection (RFC 7662).
@Suite struct NarrowingTests {
    static let exchange = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    func post(_ sandbox: RunningSandbox, _ fields: [(String, String)], client: String = Clients.publicID) async throws -> Reply {
        try await HTTPClient().postForm("\(sandbox.baseURL)/token", fields + [("client_id", client)])
    }

    func introspect(_ sandbox: RunningSandbox, _ token: String, client: String = Clients.publicID) async throws -> [String: Any] {
        let reply = try await HTTPClient().postForm("\(sandbox.baseURL)/introspect", [("token", token), ("client_id", client)])
        #expect(reply.status == 200)
        return reply.json
    }

    func refresh(_ sandbox: RunningSandbox, _ token: String, _ extra: [(String, String)]) async throws -> Reply {
        try await post(sandbox, [("grant_type", "refresh_token"), ("refresh_token", token)] + extra)
    }

    @Test func aRefreshNarrowsTheAccessTokenAndTheRefreshTokenKeepsTheWholeGrant() async throws {
        let sandbox = try await RunningSandbox.start()
        let first = try await Browser(sandbox: sandbox).tokens(scope: "openid profile email").json
        let narrowed = try await refresh(sandbox, try #require(first["refresh_token"] as? String), [("scope", "email")])
        #expect(narrowed.status == 200)
        #expect(narrowed.json["scope"] as? String == "email")
        #expect(narrowed.json["id_token"] == nil, "no openid, no ID token")
        let access = try #require(narrowed.json["access_token"] as? String)
        #expect(try await introspect(sandbox, access)["scope"] as? String == "email")
        // RFC 6749 §6: the new refresh token's scope is the old one's.
        let whole = try await refresh(sandbox, try #require(narrowed.json["refresh_token"] as? String), [])
        #expect(whole.json["scope"] as? String == "openid profile email")
        let again = try await introspect(sandbox, try #require(whole.json["access_token"] as? String))
        #expect(again["scope"] as? String == "openid profile email")
        #expect(again["aud"] == nil)
    }

    @Test func aRefreshMayNameAResourceForAGrantOfTheAPI() async throws {
        let sandbox = try await RunningSandbox.start()
        let refreshToken = try #require(try await Browser(sandbox: sandbox).tokens().json["refresh_token"] as? String)
        let resource = "\(sandbox.baseURL)/api/open"
        let narrowed = try await refresh(sandbox, refreshToken, [("resource", resource), ("scope", "profile")])
        #expect(narrowed.status == 200)
        let seen = try await introspect(sandbox, try #require(narrowed.json["access_token"] as? String))
        #expect(seen["aud"] as? String == resource)
        #expect(seen["scope"] as? String == "profile")
        let fragment = try await refresh(sandbox, try #require(narrowed.json["refresh_token"] as? String), [("resource", resource + "#x")])
        #expect(fragment.error == "invalid_target")
    }

    @Test func tokenExchangeGivesANarrowerTokenWithoutARefreshToken() async throws {
        let sandbox = try await RunningSandbox.start()
        let discovery = try await HTTPClient().get("\(sandbox.baseURL)/.well-known/openid-configuration").json
        #expect((discovery["grant_types_supported"] as? [String])?.contains(Self.exchange) == true)
        let access = try #require(try await Browser(sandbox: sandbox).tokens().json["access_token"] as? String)
        let subject = [("grant_type", Self.exchange), ("subject_token", access), ("subject_token_type", Self.accessTokenType)]
        let reply = try await post(sandbox, subject + [("scope", "openid email"), ("resource", "https://api.example/v1")])
        #expect(reply.status == 200)
        #expect(reply.json["refresh_token"] == nil)
        #expect(reply.json["issued_token_type"] as? String == Self.accessTokenType)
        #expect(reply.json["token_type"] as? String == "Bearer")
        let exchanged = try #require(reply.json["access_token"] as? String)
        let seen = try await introspect(sandbox, exchanged)
        #expect(seen["scope"] as? String == "openid email")
        #expect(seen["aud"] as? String == "https://api.example/v1")
        #expect(try await introspect(sandbox, access)["scope"] as? String == "openid profile email", "the subject is unchanged")

        // No wider than the token exchanged, and only a client's own.
        let wider = try await post(
            sandbox,
            [
                ("grant_type", Self.exchange), ("subject_token", exchanged), ("subject_token_type", Self.accessTokenType),
                ("scope", "openid profile"),
            ])
        #expect(wider.error == "invalid_scope")
        let elsewhere = try await post(
            sandbox,
            [
                ("grant_type", Self.exchange), ("subject_token", exchanged), ("subject_token_type", Self.accessTokenType),
                ("resource", "https://other.example/"),
            ])
        #expect(elsewhere.error == "invalid_target")
        let stranger = try await HTTPClient().postForm(
            "\(sandbox.baseURL)/token", subject, headers: ["Authorization": HTTPClient.basic(Clients.confidentialID, Clients.secret)])
        #expect(stranger.error == "invalid_grant")
        let refreshTokenAsSubject = try await post(
            sandbox, [("grant_type", Self.exchange), ("subject_token", "sbx_rt_x"), ("subject_token_type", Self.accessTokenType)])
        #expect(refreshTokenAsSubject.error == "invalid_grant")
    }

    @Test func aSandboxThatRefusesNarrowingAnswersTheWholeGrant() async throws {
        let sandbox = try await RunningSandbox.start(["--narrowing", "none"])
        let discovery = try await HTTPClient().get("\(sandbox.baseURL)/.well-known/openid-configuration").json
        #expect((discovery["grant_types_supported"] as? [String])?.contains(Self.exchange) == false)
        let tokens = try await Browser(sandbox: sandbox).tokens().json
        let narrowed = try await refresh(sandbox, try #require(tokens["refresh_token"] as? String), [("scope", "email")])
        #expect(narrowed.status == 200)
        #expect(narrowed.json["scope"] as? String == "openid profile email")
        let access = try #require(tokens["access_token"] as? String)
        let exchange = try await post(
            sandbox, [("grant_type", Self.exchange), ("subject_token", access), ("subject_token_type", Self.accessTokenType)])
        #expect(exchange.error == "unsupported_grant_type")
    }

    @Test func introspectionShowsOnlyAClientsOwnAccessTokens() async throws {
        let sandbox = try await RunningSandbox.start(["--narrowing", "refresh"])
        let tokens = try await Browser(sandbox: sandbox).tokens().json
        let access = try #require(tokens["access_token"] as? String)
        #expect(try await introspect(sandbox, access)["active"] as? Bool == true)
        let other = try await HTTPClient().postForm(
            "\(sandbox.baseURL)/introspect", [("token", access)],
            headers: ["Authorization": HTTPClient.basic(Clients.confidentialID, Clients.secret)])
        #expect(other.json["active"] as? Bool == false)
        #expect(try await introspect(sandbox, try #require(tokens["refresh_token"] as? String))["active"] as? Bool == false)
        #expect(try await introspect(sandbox, "sbx_at_forged")["active"] as? Bool == false)
        let exchange = try await post(
            sandbox, [("grant_type", Self.exchange), ("subject_token", access), ("subject_token_type", Self.accessTokenType)])
        #expect(exchange.error == "unsupported_grant_type", "refresh only: no exchange")
    }
}
