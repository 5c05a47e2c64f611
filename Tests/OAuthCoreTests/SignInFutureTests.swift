import Foundation
import Testing

@testable import OAuthCore

/// Issue 40 §1: what is known of a sign-in's future, from its token and its provider file alone.
@Suite struct SignInFutureTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func token(refresh: String? = "rt", refreshEnds: TimeInterval? = nil, signedIn: TimeInterval? = -3600, received: TimeInterval = -60)
        -> Token
    {
        var token = Token(
            accessToken: "at", refreshToken: refresh, expiresAt: now.addingTimeInterval(3000), receivedAt: now.addingTimeInterval(received))
        token.refreshExpiresAt = refreshEnds.map { now.addingTimeInterval($0) }
        token.signedInAt = signedIn.map { now.addingTimeInterval($0) }
        return token
    }

    @Test func theRefreshTokensEndIsReadFromTheAnswerAndKeptWhenTheRefreshTokenIs() throws {
        let body =
            #"{"access_token":"at","token_type":"bearer","expires_in":28800,"refresh_token":"rt","refresh_token_expires_in":15897600}"#
        let read = try TokenResponse.token(
            from: HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8)), secrets: [], now: now)
        #expect(read.refreshExpiresAt == now.addingTimeInterval(15_897_600))
        let alone = #"{"access_token":"at","token_type":"bearer","refresh_token_expires_in":60}"#
        let without = try TokenResponse.token(
            from: HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(alone.utf8)), secrets: [], now: now)
        #expect(without.refreshExpiresAt == nil, "no refresh token, no end of one")
    }

    @Test func theSoonestKnownEndCountsAndSaysWhy() {
        // The provider's word alone.
        var future = SignInFuture(token: token(refreshEnds: 86_400))
        #expect(future.endsAt == now.addingTimeInterval(86_400) && future.endsBecause == .provider)
        // An idle lifetime counts from the last renewal; sooner than the provider's here.
        future = SignInFuture(token: token(refreshEnds: 86_400), idleLifetime: 3_600)
        #expect(future.endsAt == now.addingTimeInterval(3_540) && future.endsBecause == .idleLifetime)
        // A session lifetime counts from the sign-in, however often renewed.
        future = SignInFuture(token: token(refreshEnds: 86_400), idleLifetime: 3_600, sessionLifetime: 3_660)
        #expect(future.endsAt == now.addingTimeInterval(60) && future.endsBecause == .sessionLifetime)
        #expect(future.ends(within: 120, now: now) && !future.ends(within: 30, now: now))
        #expect(future.lastRenewedAt == now.addingTimeInterval(-60) && future.signedInAt == now.addingTimeInterval(-3600))
        // A sign-in from an earlier release: no moment of sign-in, so no session end, nor a last renewal.
        future = SignInFuture(token: token(signedIn: nil), sessionLifetime: 60)
        #expect(future.endsAt == nil && future.lastRenewedAt == nil)
        // Nothing known: no end.
        #expect(SignInFuture(token: token()).endsAt == nil)
    }

    @Test func withoutARefreshTokenItEndsWithItsAccessToken() {
        let future = SignInFuture(token: token(refresh: nil), idleLifetime: 60)
        #expect(!future.renewable && future.endsAt == now.addingTimeInterval(3000) && future.endsBecause == .accessToken)
        #expect(!future.ends(within: 1e9, now: now), "a sign-in that cannot be renewed is not one whose end is coming")
    }

    @Test func theWindowsSentence() {
        let future = SignInFuture(token: token(refreshEnds: 6 * 86_400 + 100))
        #expect(future.sentence(now: now) == "This sign-in ends in 6 days, as the provider said.")
        #expect(SignInFuture(token: token(refreshEnds: -1)).sentence(now: now) == "This sign-in has ended: sign in again.")
        #expect(SignInFuture(token: token()).sentence(now: now) == nil)
        #expect(
            SignInFuture.span(3_600) == "1 hour" && SignInFuture.span(150) == "3 minutes" && SignInFuture.span(7 * 86_400 - 60) == "7 days"
                && SignInFuture.span(5) == "less than a minute")
    }

    @Test func aProviderFileDeclaresLifetimesInWholeSeconds() throws {
        let file = try ProviderFile(
            data: Data(#"{"idle_lifetime": 2592000, "session_lifetime": 7776000}"#.utf8), file: URL(fileURLWithPath: "/x.json"))
        #expect(file.idleLifetime.value == Seconds(2_592_000) && file.sessionLifetime.value == Seconds(7_776_000))
        for text in [#"{"idle_lifetime": 0}"#, #"{"session_lifetime": 1.5}"#, #"{"idle_lifetime": 1e12}"#] {
            let error = #expect(throws: OAuthError.self) { try ProviderFile(data: Data(text.utf8), file: URL(fileURLWithPath: "/x.json")) }
            #expect("\(error!)".contains("is not valid"), "\(text): \(error!)")
        }
        #expect(throws: OAuthError.self) {
            try ProviderFile(data: Data(#"{"idle_lifetime": "30d"}"#.utf8), file: URL(fileURLWithPath: "/x.json"))
        }
    }

    /// Through a real sign-in and renewal: the moment of the sign-in is kept across renewals, and the
    /// refresh token's end is the new one's.
    @Test func aRenewalKeepsTheSignInsMomentAndTakesTheNewRefreshTokensEnd() async throws {
        let live = try await LiveSandbox(["--refresh-token-ttl", "86400"])
        let signedIn = try await live.signIn(live.session())
        let at = try #require(signedIn.signedInAt)
        #expect(signedIn.refreshExpiresAt == signedIn.receivedAt.addingTimeInterval(86_400))
        let renewed = try await live.session(now: { Date().addingTimeInterval(7200) }).renewedToken()
        #expect(renewed.signedInAt == at && renewed.accessToken != signedIn.accessToken)
        #expect(renewed.refreshExpiresAt == renewed.receivedAt.addingTimeInterval(86_400))
        #expect(try live.store.load(for: "sandbox")?.signedInAt == at, "kept as renewed")
    }
}

extension SignInFutureTests {
    /// A token had anew whenever it ends (client credentials, or through the identity provider) does
    /// not end the sign-in when it ends: nothing to warn of, and it is said to renew.
    @Test func aMintedTokensEndIsNotTheSignInsEnd() {
        let plain = SignInFuture(token: token(refresh: nil))
        #expect(plain.endsAt != nil && !plain.renewable, "a token nobody can renew ends the sign-in")
        let minted = SignInFuture(token: token(refresh: nil), minted: true)
        #expect(minted.endsAt == nil && minted.renewable)
    }
}
