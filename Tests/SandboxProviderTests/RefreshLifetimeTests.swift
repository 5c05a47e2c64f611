import Foundation
import TestSupport
import Testing

/// Issue 40: refresh tokens that end (`--refresh-token-ttl`), said in the answer as GitHub's user
/// tokens say theirs (`refresh_token_expires_in`), and refused once past it.
@Suite struct RefreshLifetimeTests {
    @Test func aRefreshTokenPastItsLifetimeIsInvalidGrantAndItsLifetimeIsSaid() async throws {
        let sandbox = try await RunningSandbox.start(["--refresh-token-ttl", "1"])
        let browser = Browser(sandbox: sandbox)
        let first = try await browser.tokens().json
        #expect(first["refresh_token_expires_in"] as? Int == 1)
        let refresh = try #require(first["refresh_token"] as? String)
        // Past its second (a slower run only makes it older).
        try await Task.sleep(for: .milliseconds(1500))
        let late = try await browser.refresh(refresh)
        #expect(late.status == 400 && late.error == "invalid_grant")
        #expect(late.json["error_description"] as? String == "The refresh token has expired.")
    }

    @Test func withoutALifetimeNoneIsSaid() async throws {
        let sandbox = try await RunningSandbox.start()
        let first = try await Browser(sandbox: sandbox).tokens().json
        #expect(first["refresh_token"] != nil && first["refresh_token_expires_in"] == nil)
    }

    @Test func aLifetimeMayGoUnsaid() async throws {
        let sandbox = try await RunningSandbox.start(["--refresh-token-ttl", "1", "--no-say-refresh-token-ttl"])
        let browser = Browser(sandbox: sandbox)
        let first = try await browser.tokens().json
        #expect(first["refresh_token_expires_in"] == nil)
        let refresh = try #require(first["refresh_token"] as? String)
        try await Task.sleep(for: .milliseconds(1500))
        #expect(try await browser.refresh(refresh).error == "invalid_grant", "ended all the same")
    }
}
