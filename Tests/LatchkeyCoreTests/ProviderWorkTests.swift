import Foundation
import LatchkeyCore
import Logging
import OAuthCore
import Synchronization
import TestSupport
import Testing

/// What each effect does, against the real sandbox: the event it answers with is the one
/// the state machine takes next, so a run of effects is a run of the app without its window.
@Suite struct ProviderWorkTests {
    let logger = Logger(label: "test")

    /// The sandbox preset, served by a real sandbox, over a store in a temporary directory.
    func sandboxProvider(
        _ sandbox: RunningSandbox, store: any TokenStore, reachable: @escaping @Sendable () async throws -> Void = {}
    ) throws -> Provider {
        let home = try SetUpHome()
        let configuration = try home.catalog.configuration(named: "sandbox", overrides: ["issuer": sandbox.baseURL])
        return Provider(configuration: configuration, store: store, reachable: reachable)
    }

    @Test func aWholeSessionRunsEffectByEffect() async throws {
        let sandbox = try await RunningSandbox.start()
        let provider = try sandboxProvider(sandbox, store: MemoryTokenStore())
        var state = AppState.Transition(state: .starting(), effects: [.readStoredSignIn(notice: nil)])
        func take(_ event: AppEvent) { state = AppState.next(state.state, event) }

        let stored = await provider.storedSignIn(notice: nil)
        #expect(stored.event == .launched(signedIn: false, notice: nil) && stored.scopes.isEmpty)
        take(stored.event)
        #expect(state.effects == [.prepareSignIn, .listAccounts])

        take(.signInRequested)
        #expect(state.effects == [.signIn(.inUse)])
        let steps = Mutex<[AppEvent]>([])
        let signedIn = await provider.signIn(using: FormPostingUserAgent(), logger: logger) { step in steps.withLock { $0.append(step) } }
        #expect(steps.withLock { $0 } == [.redirectReceived, .tokensReceived])
        #expect(signedIn.event == .signInSucceeded(notice: nil))
        #expect(signedIn.scopes == provider.configuration.scopes, "what the sign-in allows")
        for step in steps.withLock({ $0 }) + [signedIn.event] { take(step) }
        #expect(state.state == .signedIn(notice: nil))

        take(.profileRequested)
        #expect(state.effects == [.fetchProfile])
        let (loaded, picture) = await provider.profileEvent()
        guard case .profileLoaded(let profile) = loaded else {
            Issue.record("\(loaded)")
            return
        }
        #expect(profile.name == "Ada Lovelace")
        #expect(picture.map { String(decoding: $0, as: UTF8.self).contains("<svg") } == true, "the picture's bytes")
        take(loaded)
        take(.openProfileRequested)
        #expect(state.effects == [.openProfile(try #require(profile.profileURL))])

        let again = await provider.storedSignIn(notice: nil)
        #expect(again.event == .launched(signedIn: true, notice: nil))
        #expect(again.scopes == signedIn.scopes, "what the stored sign-in allows is shown after a relaunch")
        #expect(await provider.renewal(logger: logger) == nil, "a token still fresh needs no renewal and ends nothing")

        take(.signOutRequested)
        #expect(state.effects == [.signOut])
        let out = await provider.signOutEvent()
        #expect(out == .signedOut(notice: "Signed out of \(provider.configuration.displayName)."))
        take(out)
        #expect(state.effects == [.readStoredSignIn(notice: "Signed out of \(provider.configuration.displayName).")])
        #expect(await provider.storedSignIn(notice: nil).event == .launched(signedIn: false, notice: nil))
    }

    @Test func aDeniedSignInFailsWithItsSentenceAndKeepsTheSignInBefore() async throws {
        let sandbox = try await RunningSandbox.start()
        let store = MemoryTokenStore()
        let provider = try sandboxProvider(sandbox, store: store)
        _ = await provider.signIn(using: FormPostingUserAgent(), logger: logger) { _ in }
        let before = try #require(try store.load(for: "sandbox"))

        let denied = await provider.signIn(using: FormPostingUserAgent(action: "deny"), logger: logger) { _ in }
        guard case .signInFailed(let error) = denied.event else {
            Issue.record("\(denied.event)")
            return
        }
        #expect(AppState.next(.signingIn, denied.event).state == .failed(message: error.description, signedIn: false))
        #expect(error == .cancelled, "Deny is access_denied, which the person chose: said as cancelled")
        #expect(try store.load(for: "sandbox") == before)
    }

    /// Waits until the token held is due for renewal (its second of life is over): a renewal that
    /// finds it still fresh would ask the provider nothing (the sign-in itself may take that long on a loaded machine).
    func untilDue(_ provider: Provider) async throws {
        let expiresAt = try #require(await provider.session.currentToken()?.expiresAt)
        let wait = expiresAt.timeIntervalSinceNow
        if wait > 0 { try await Task.sleep(nanoseconds: UInt64(wait * 1e9) + 1_000_000) }
    }

    /// A refresh the provider refuses ends the sign-in with its reason; one it cannot answer keeps it.
    @Test func aRenewalRefusedEndsTheSignInAndAPassingFailureKeepsIt() async throws {
        let sandbox = try await RunningSandbox.start(["--access-token-ttl", "1"])
        let provider = try sandboxProvider(sandbox, store: MemoryTokenStore())
        _ = await provider.signIn(using: FormPostingUserAgent(), logger: logger) { _ in }

        try await sandbox.setFault("token", "500")
        try await untilDue(provider)
        #expect(await provider.renewal(logger: logger) == nil)
        #expect(await provider.session.isSignedIn)

        // The refresh token revoked at the provider: the next refresh is refused for good.
        let refreshToken = try #require(await provider.session.currentToken()?.refreshToken)
        let revoked = try await HTTPClient().postForm(
            sandbox.baseURL + "/revoke", [("token", refreshToken), ("client_id", provider.configuration.clientID)])
        #expect(revoked.status == 200)
        try await untilDue(provider)
        let ended = await provider.renewal(logger: logger)
        guard case .sessionEnded(let reason) = ended else {
            Issue.record("\(String(describing: ended))")
            return
        }
        #expect(reason.contains("Sandbox"))
        #expect(AppState.next(.signedIn(notice: nil), ended!).state == .signedOut(notice: reason))
    }

    /// Issue 36 §12: Ada's sign-in, redone where the page signed Grace in. Grace's tokens are kept as
    /// an account of her own; the window goes on showing Ada as she is — signed out still (her sign-in
    /// had ended: Sign in offered), or signed in with her own scopes — and the notice says where the
    /// tokens went. (The sign-in on another device ends through the same answer.)
    @Test(arguments: [false, true])
    func aSignInThatCameBackAsSomeoneElseLeavesTheAccountMeantAsItIs(adaStillSignedIn: Bool) async throws {
        // Tokens of the sandbox's usual lifetime: one of a second can end before the sign-in has read
        // who signed in, on a loaded machine, and the account would be kept without her address.
        let sandbox = try await RunningSandbox.start(["--device-interval", "1"])
        let home = try SetUpHome()
        let accounts = AccountList(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent("accounts-\(UUID().uuidString)"))
        let configuration = try home.catalog.configuration(named: "sandbox", overrides: ["issuer": sandbox.baseURL])
        let provider = Provider(configuration: configuration, store: MemoryTokenStore(), accounts: accounts)
        _ = await provider.signIn(using: FormPostingUserAgent(), logger: logger) { _ in }
        let adaScopes = try #require(await provider.session.currentToken()).allowedScopes(asked: configuration.scopes)
        if !adaStillSignedIn {
            // Her refresh token revoked at the provider: her sign-in ends at the next renewal (asked for
            // now, as a refused access token would), and she stays listed.
            let refreshToken = try #require(await provider.session.currentToken()?.refreshToken)
            _ = try await HTTPClient().postForm(
                sandbox.baseURL + "/revoke", [("token", refreshToken), ("client_id", configuration.clientID)])
            let refused = await #expect(throws: OAuthError.self) { try await provider.session.renewedToken() }
            guard case .signedOut? = refused else {
                return #expect(Bool(false), "Ada's sign-in did not end: \(String(describing: refused))")
            }
        }
        #expect(await provider.session.isSignedIn == adaStillSignedIn)

        let grace = await provider.signIn(using: FormPostingUserAgent(username: "grace", password: "compiler"), logger: logger) { _ in }
        let said =
            "Signed in as grace@sandbox.example, not as ada@sandbox.example: kept as another account, and ada@sandbox.example is left as it was."
        #expect(grace.event == .signInKeptApart(notice: said, meantSignedIn: adaStillSignedIn))
        #expect(grace.scopes == (adaStillSignedIn ? adaScopes : []), "Ada's scopes, or none: never Grace's")
        let shown = AppState.next(.saving, grace.event)
        #expect(shown.state == (adaStillSignedIn ? .signedIn(notice: said) : .signedOut(notice: said)))
        #expect(shown.effects.contains(.listAccounts), "Grace's account is listed beside")
        let inUse = provider.accountInUseKey
        let signedIn = await provider.session.isSignedIn
        #expect(inUse == "sandbox" && signedIn == adaStillSignedIn, "Ada is still the account in use, as she was")
        #expect(await provider.accounts().accounts.count == 2)
    }

    @Test func aProviderOutOfReachSaysWhyInPlaceOfTheSignIn() async throws {
        let sandbox = try await RunningSandbox.start()
        struct Unreachable: Error, CustomStringConvertible { var description: String { "The offline sandbox provider did not start." } }
        let provider = try sandboxProvider(sandbox, store: MemoryTokenStore()) { throw Unreachable() }
        let stored = await provider.storedSignIn(notice: "set up")
        #expect(stored.event == .launched(signedIn: false, notice: "The offline sandbox provider did not start."))
    }
}
