import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// When a stored token is renewed, against the real latchkey-sandbox: before it is sent anywhere once it is due, and once per token.
@Suite struct RenewalTests {
    @Test func anExpiredAccessTokenIsRefreshedSilentlyBeforeTheProfile() async throws {
        // A 30-second token, looked at 20 seconds on (past half its life): the first profile
        // fetch must refresh before it asks; the new token is long enough that it cannot expire
        // on the way to /userinfo on a busy machine (with 2 s it did in CI, and the fetch refreshed twice).
        let live = try await LiveSandbox(["--access-token-ttl", "30"])
        let token = try await live.signIn(live.session())
        let session = live.session(now: { Date().addingTimeInterval(20) })
        let profile = try await live.profiles.fetch(using: session)
        #expect(profile.name == "Ada Lovelace")
        #expect(try live.store.load(for: "sandbox")?.accessToken != token.accessToken)
        let stats = try await live.sandbox.statistics()
        #expect(stats["userinfo_requests"] == 1, "the stale token was never sent")
        #expect(stats["refresh_grants"] == 1)
    }

    /// A token shorter-lived than twice the refresh margin is renewed once half its life is
    /// gone, not at every use: one renewal per token, however often it is asked for (the agent's
    /// many callers of a 30-second token).
    @Test func aShortLivedTokenIsRenewedOnceHalfItsLifeIsGoneNotAtEveryUse() async throws {
        let live = try await LiveSandbox(["--access-token-ttl", "30"])
        let token = try await live.signIn(live.session())
        let now = live.session()
        for _ in 0..<3 { #expect(try await now.freshToken().accessToken == token.accessToken) }
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 0, "not renewed while most of its life is left")
        let later = live.session(now: { Date().addingTimeInterval(16) })
        let renewed = try await later.freshToken()
        #expect(renewed.accessToken != token.accessToken)
        #expect(try await later.freshToken().accessToken == renewed.accessToken)
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 1, "renewed once")
    }
}
