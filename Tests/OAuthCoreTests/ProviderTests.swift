import Foundation
import OAuthCore
import Synchronization
import TestSupport
import Testing

/// `Provider`: one value owns a chosen provider, and what must come before each use.
@Suite struct ProviderTests {
    func statistics(_ sandbox: RunningSandbox) async throws -> [String: Any] {
        try await HTTPClient().get(sandbox.baseURL + "/_admin/stats").json
    }

    /// The server forgot the client the service registered: the sign-in registers again
    /// first, and everything after it (the session, the profile) speaks as the new client.
    @Test func aForgottenRegistrationIsMadeAgainBeforeTheSignInAndUsedAfterIt() async throws {
        let sandbox = try await RunningSandbox.start()
        let home = try ZeroConfigurationHome()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let first = try await home.providers.configuration(for: me).configuration
        #expect(try await HTTPClient().send(method: "DELETE", sandbox.baseURL + "/_admin/clients", headers: [:], body: nil).status == 204)

        let provider = Provider(configuration: first, store: home.tokens, registrations: home.providers)
        _ = try await provider.signIn(using: FormPostingUserAgent())
        #expect(provider.configuration.clientID != first.clientID)
        #expect(try await statistics(sandbox)["registrations"] as? Int == 2)
        let token = try await provider.freshToken()
        #expect(try await HTTPClient().get(me.absoluteString, headers: ["Authorization": "Bearer \(token.accessToken)"]).status == 200)
        // The refresh after it goes out as the new client: the old one is unknown to the server.
        _ = try await provider.session.replacement(forRejected: token)
        #expect(try await provider.profile().name == "Ada Lovelace")
    }

    /// Read back and still known, the client signs in as the server and the store now have it
    /// (a secret the server rotated at the read-back is kept by then), not as this value was made.
    @Test func aKnownRegistrationSignsInAsKeptAfterTheReadBack() async throws {
        let sandbox = try await RunningSandbox.start()
        let home = try ZeroConfigurationHome()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let kept = try await home.providers.configuration(for: me).configuration
        var stale = kept
        stale.clientSecret = "rotated-away"
        let provider = Provider(configuration: stale, store: home.tokens, registrations: home.providers)
        _ = try await provider.signIn(using: FormPostingUserAgent())
        #expect(provider.configuration.clientID == kept.clientID)
        #expect(provider.configuration.clientSecret == kept.clientSecret, "the secret as kept, not the one it was made with")
        #expect(try await statistics(sandbox)["registrations"] as? Int == 1, "known: not registered again")
    }

    /// Without the service, the client id is the person's own: never read back, never replaced.
    @Test func withoutTheServiceTheClientIsNeverCheckedNorReplaced() async throws {
        let sandbox = try await RunningSandbox.start()
        let home = try ZeroConfigurationHome()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let first = try await home.providers.configuration(for: me).configuration
        #expect(try await HTTPClient().send(method: "DELETE", sandbox.baseURL + "/_admin/clients", headers: [:], body: nil).status == 204)

        let provider = Provider(configuration: first, store: home.tokens)
        await #expect(throws: OAuthError.self) { try await provider.signIn(using: FormPostingUserAgent()) }
        #expect(provider.configuration.clientID == first.clientID)
        #expect(try await statistics(sandbox)["registrations"] as? Int == 1)
    }

    /// Every use waits until the provider can be reached (a server the program starts itself),
    /// and one that cannot be reached says why; signing out still forgets the sign-in here.
    @Test func everyUseWaitsUntilTheProviderCanBeReached() async throws {
        let live = try await LiveSandbox()
        let store = live.store
        let waits = Mutex(0)
        let reachable = Mutex(true)
        struct Unreachable: Error {}
        let provider = Provider(configuration: live.configuration, store: store) {
            waits.withLock { $0 += 1 }
            guard reachable.withLock({ $0 }) else { throw Unreachable() }
        }
        _ = try await provider.signIn(using: FormPostingUserAgent())
        _ = try await provider.freshToken()
        _ = try await provider.profile()
        #expect(waits.withLock { $0 } == 3)

        reachable.withLock { $0 = false }
        let asked = try await live.sandbox.statistics()["token_requests"]
        await #expect(throws: Unreachable.self) { try await provider.signIn(using: FormPostingUserAgent()) }
        await #expect(throws: Unreachable.self) { try await provider.profile() }
        #expect(try await live.sandbox.statistics()["token_requests"] == asked, "nothing was sent")
        #expect(await provider.session.isSignedIn, "a provider out of reach loses no sign-in")
        await provider.signOut()
        #expect(try store.load(for: live.configuration.id) == nil)
    }
}
