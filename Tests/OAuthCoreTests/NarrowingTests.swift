import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// Narrower tokens than the sign-in, against the real latchkey-sandbox: by token exchange, by
/// refresh, refused, and never in place of the sign-in's own. What a token can do is what the
/// sandbox's introspection (RFC 7662) says of it.
@Suite struct NarrowingTests {
    func introspect(_ live: LiveSandbox, _ token: Token) async throws -> [String: Any] {
        try await HTTPClient().postForm(
            "\(live.sandbox.baseURL)/introspect", [("token", token.accessToken), ("client_id", live.configuration.clientID)]
        ).json
    }

    @Test func tokenExchangeGivesTheScopesAskedOnceForManyCallersAndLeavesTheSignIn() async throws {
        let live = try await LiveSandbox()
        #expect(live.configuration.narrowing == .tokenExchange, "the sandbox preset says so")
        let signedIn = try await live.signIn(live.session())
        let session = live.session()
        let email = Narrowing(scopes: ["email"])
        let tokens = try await withThrowingTaskGroup(of: Token.self) { group in
            for _ in 0..<8 { group.addTask { try await session.narrowedToken(email) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(tokens.map(\.accessToken)).count == 1, "one token for all eight")
        let token = try #require(tokens.first)
        #expect(token.accessToken != signedIn.accessToken)
        #expect(token.refreshToken == nil && token.idToken == nil)
        #expect(try await introspect(live, token)["scope"] as? String == "email")
        #expect(try await live.sandbox.statistics()["token_exchanges"] == 1)
        #expect(try live.store.load(for: "sandbox") == signedIn, "the sign-in's own token is untouched")
        #expect(try await session.freshToken().accessToken == signedIn.accessToken)

        // Another narrowing is another token; one with a resource carries it as its audience.
        let resource = try #require(URL(string: "\(live.sandbox.baseURL)/api/open"))
        let forResource = try await session.narrowedToken(Narrowing(scopes: ["profile"], resource: resource))
        let seen = try await introspect(live, forResource)
        #expect(seen["aud"] as? String == resource.absoluteString && seen["scope"] as? String == "profile")
        #expect(try await live.sandbox.statistics()["token_exchanges"] == 2)
    }

    @Test func aRefreshNarrowsAndTheSignInKeepsItsAccessTokenAndTheRotatedRefreshToken() async throws {
        let live = try await LiveSandbox(["--narrowing", "refresh"]) { $0.narrowing = .refresh }
        let signedIn = try await live.signIn(live.session())
        let session = live.session()
        let token = try await session.narrowedToken(Narrowing(scopes: ["openid", "email"]))
        #expect(try await introspect(live, token)["scope"] as? String == "email openid", "the scopes asked, sorted")
        let kept = try #require(try live.store.load(for: "sandbox"))
        #expect(kept.accessToken == signedIn.accessToken, "the sign-in keeps its own access token")
        #expect(kept.refreshToken != signedIn.refreshToken, "and the refresh token the sandbox rotated to")
        #expect(try await live.refreshStatus(try #require(signedIn.refreshToken)) == "invalid_grant", "the old one is spent")
        // The status check replayed a spent token, which ends the grant at the sandbox (as the BCP
        // asks); what matters here is that the rotated token was the one kept: the first renewal
        // after a fresh sign-in sends it.
        let again = live.session()
        let second = try await live.signIn(again)
        _ = try await again.narrowedToken(Narrowing(scopes: ["email"]))
        let renewed = try await again.renewedToken()
        #expect(renewed.accessToken != second.accessToken, "the whole sign-in renews with the rotated refresh token")
        #expect(try await introspect(live, renewed)["scope"] as? String == "openid profile email offline_access")
    }

    @Test func aProviderThatAnswersMoreThanAskedIsRefusedAndTheSignInStays() async throws {
        let live = try await LiveSandbox(["--narrowing", "none"]) { $0.narrowing = .refresh }
        let signedIn = try await live.signIn(live.session())
        let session = live.session()
        let refusal = await #expect(throws: OAuthError.self) { try await session.narrowedToken(Narrowing(scopes: ["email"])) }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("\"narrowing\": \"none\""), "says how to mark the provider")
        #expect(await session.isSignedIn)
        #expect(try live.store.load(for: "sandbox")?.accessToken == signedIn.accessToken)
    }

    @Test func aProviderThatCannotNarrowSaysSoWithoutAsking() async throws {
        let live = try await LiveSandbox(["--narrowing", "none"]) { $0.narrowing = .none }
        _ = try await live.signIn(live.session())
        let session = live.session()
        let before = try await live.sandbox.statistics()["token_requests"]
        let refusal = await #expect(throws: OAuthError.self) { try await session.narrowedToken(Narrowing(scopes: ["email"])) }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("gives its tokens whole"))
        #expect(try await live.sandbox.statistics()["token_requests"] == before, "nothing asked of the provider")
    }

    @Test func aRefusedNarrowingIsASentenceNotASignOut() async throws {
        let live = try await LiveSandbox()
        let session = live.session()
        _ = try await live.signIn(session)
        let refusal = await #expect(throws: OAuthError.self) {
            try await session.narrowedToken(Narrowing(scopes: ["admin"]))
        }
        #expect("\(refusal.map { "\($0)" } ?? "")".hasPrefix("Sandbox provider (offline demo) would not give a narrower token"))
        #expect(await session.isSignedIn)
        #expect(try await session.freshToken().accessToken.isEmpty == false)
    }

    @Test func aNarrowedTokenIsRenewedWhenDueAndForgottenAtSignOut() async throws {
        let live = try await LiveSandbox(["--access-token-ttl", "30"])
        _ = try await live.signIn(live.session())
        let email = Narrowing(scopes: ["email"])
        let first = try await live.session().narrowedToken(email)
        let session = live.session()
        let held = try await session.narrowedToken(email)
        #expect(try await session.narrowedToken(email).accessToken == held.accessToken, "kept while good")
        let later = live.session(now: { Date().addingTimeInterval(16) })
        let due = try await later.narrowedToken(email)
        #expect(due.accessToken != held.accessToken && due.accessToken != first.accessToken, "made anew past half its life")
        _ = await session.signOut()
        await #expect(throws: OAuthError.self) { try await session.narrowedToken(email) }
    }

    @Test func discoveryTellsWhetherTheServerExchangesTokens() async throws {
        let exchanging = try await RunningSandbox.start()
        #expect(try await ProviderDiscovery.providerFile(issuer: exchanging.baseURL).narrowing.value == .tokenExchange)
        let refreshing = try await RunningSandbox.start(["--narrowing", "refresh"])
        var file = try await ProviderDiscovery.providerFile(issuer: refreshing.baseURL)
        #expect(file.narrowing.value == nil)
        (file.id, file.clientID) = (.value("refreshing"), .value("latchkey-desktop"))
        #expect(try ProviderConfiguration(file: file.resolvingEndpoints()).narrowing == .refresh, "the standard way unless told")
    }

    /// Another process signs out (and the next person may sign in under the same key): a narrower
    /// token made before is never handed out again.
    @Test func aSignOutElsewhereEndsTheNarrowedTokensHeld() async throws {
        let live = try await LiveSandbox()
        _ = try await live.signIn(live.session())
        let agent = live.session()
        let email = Narrowing(scopes: ["email"])
        let held = try await agent.narrowedToken(email)
        _ = await live.session().signOut()
        await agent.rereadStoreAtNextUse()
        await #expect(throws: OAuthError.self) { try await agent.narrowedToken(email) }
        _ = try await live.signIn(live.session())
        await agent.rereadStoreAtNextUse()
        let next = try await agent.narrowedToken(email)
        #expect(next.accessToken != held.accessToken, "the next sign-in's, never the one before")
    }

    @Test func whatANarrowingCovers() {
        let all = Narrowing()
        let email = Narrowing(scopes: ["email"])
        let both = Narrowing(scopes: ["profile", "email", "email"])
        #expect(both.scopes == ["email", "profile"])
        #expect(email.isWithin(both) && email.isWithin(all) && both.isWithin(all))
        #expect(!both.isWithin(email) && !all.isWithin(email), "the whole sign-in is more than one scope")
        let api = URL(string: "https://api.example/")!
        #expect(!Narrowing(scopes: ["email"], resource: api).isWithin(email), "another API than the sign-in's own is not less")
        #expect(Narrowing(scopes: ["email"], resource: api).isWithin(Narrowing(resource: api)))
        #expect(!email.isWithin(Narrowing(scopes: ["email"], resource: api)), "another audience than the one allowed")
        #expect(all.within(both) == both && email.within(both) == email)
        #expect(Narrowing(resource: api).within(both) == Narrowing(scopes: ["email", "profile"], resource: api))
    }
}
