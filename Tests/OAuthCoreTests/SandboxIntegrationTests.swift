import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// OAuthCore against the real latchkey-sandbox on 127.0.0.1, over real HTTP.
@Suite struct SandboxIntegrationTests {
    @Test func wholeFlowSignsInKeepsTheTokenAndReadsTheProfile() async throws {
        let live = try await LiveSandbox()
        let agent = FormPostingUserAgent()
        let (request, response) = try await live.authorize(agent)
        #expect(agent.dismissed)
        let asked = Date()
        let token = try await live.tokenClient().exchange(response, for: request)
        let answered = Date()
        #expect(token.tokenType == "Bearer")
        #expect(token.canRefresh)
        #expect(token.idToken != nil, "an ID token whose nonce, audience and issuer were checked")
        // An hour from when the answer came: between the moment it was asked for and the moment it was
        // had (a second either side for rounding), however long a loaded machine took in between.
        let expiresAt = try #require(token.expiresAt)
        #expect(expiresAt >= asked.addingTimeInterval(3599) && expiresAt <= answered.addingTimeInterval(3601))

        let session = live.session()
        try await session.signIn(with: token)
        // A new session over the same store: the next launch.
        let relaunched = live.session()
        #expect(await relaunched.isSignedIn)
        let profile = try await live.profiles.fetch(using: relaunched)
        #expect(profile.name == "Ada Lovelace")
        #expect(profile.email == "ada@sandbox.example")
        #expect(profile.pictureURL?.absoluteString == "\(live.sandbox.baseURL)/avatar/ada.svg")
        #expect(profile.profileURL?.absoluteString == "\(live.sandbox.baseURL)/in/ada")
        #expect(profile.note == nil)

        let redirect = try #require(agent.redirect)
        let code = try #require(Fixtures.query(redirect)["code"])
        let secrets = [
            token.accessToken, token.refreshToken!, token.idToken!, code, request.state, request.codeVerifier!, request.nonce!,
        ]
        #expect(live.log.text.contains("Exchanging the authorization code"))
        #expect(live.log.text.contains("Fetching the profile"))
        for secret in secrets { #expect(!live.log.text.contains(secret), "a secret reached the log") }
    }

    @Test func aCancelledSignInEndsAsCancelledAndKeepsNothing() async throws {
        let live = try await LiveSandbox()
        let session = live.session()
        let agent = FormPostingUserAgent()
        // Cancelled at once: whichever step it reaches first, it is "cancelled", never half done.
        let signingIn = Task { try await session.signIn(using: agent) }
        signingIn.cancel()
        await #expect(throws: OAuthError.cancelled) { try await signingIn.value }
        #expect(try live.store.load(for: "sandbox") == nil, "nothing kept")
        #expect(await session.currentToken() == nil)
    }

    @Test(arguments: ["https://latchkey.invalid/oauth2/callback", "io.github.latchkey:/oauth2redirect", "http://127.0.0.1/callback"])
    func everyKindOfRedirectURIWorks(redirectURI: String) async throws {
        let live = try await LiveSandbox(overrides: ["redirect_uri": redirectURI])
        // The sandbox allows both user agents; a redirect the browser cannot come back to leaves the window alone.
        #expect(live.configuration.usableUserAgents == (redirectURI.hasPrefix("http:") ? [.embedded, .browser] : [.embedded]))
        let (request, response) = try await live.authorize()
        #expect(try await live.tokenClient().exchange(response, for: request).accessToken.isEmpty == false)
    }

    @Test func aLoopbackRedirectMayCarryAPort() async throws {
        let live = try await LiveSandbox(overrides: ["redirect_uri": "http://127.0.0.1/callback"])
        let (request, response) = try await live.authorize(redirectURI: URL(string: "http://127.0.0.1:53682/callback")!)
        #expect(try await live.tokenClient().exchange(response, for: request).accessToken.isEmpty == false)
    }

    @Test func confidentialClientAuthenticatesByBasicAndByPost() async throws {
        for method in ["client_secret_basic", "client_secret_post"] {
            let live = try await LiveSandbox(overrides: [
                "client_id": "latchkey-confidential", "client_secret": "sandbox-secret", "client_authentication": method,
            ])
            let (request, response) = try await live.authorize()
            #expect(try await live.tokenClient().exchange(response, for: request).canRefresh, "\(method)")
        }
    }

    @Test func aWrongClientSecretIsInvalidClientNotAHang() async throws {
        let live = try await LiveSandbox(overrides: [
            "client_id": "latchkey-confidential", "client_secret": "not-the-secret", "client_authentication": "client_secret_basic",
        ])
        let (request, response) = try await live.authorize()
        let error = await #expect(throws: OAuthError.self) {
            try await within(15) { try await live.tokenClient().exchange(response, for: request) }
        }
        guard case .invalidClient? = error else {
            Issue.record("expected invalidClient, got \(String(describing: error))")
            return
        }
        #expect(!String(describing: error!).contains("not-the-secret"))
    }

    @Test func denyEndsTheFlowAsCancelled() async throws {
        let live = try await LiveSandbox()
        let error = await #expect(throws: OAuthError.self) { try await live.authorize(FormPostingUserAgent(action: "deny")) }
        #expect(error == .cancelled)
    }

    @Test func refreshRotatesTheRefreshTokenAndStoresTheNewOne() async throws {
        let live = try await LiveSandbox()
        let first = try await live.signIn(live.session())
        let later = live.session(now: anHourLater)
        let refreshed = try await later.freshToken()
        #expect(refreshed.accessToken != first.accessToken)
        #expect(refreshed.refreshToken != first.refreshToken)
        #expect(refreshed.idToken != nil)
        #expect(try live.store.load(for: "sandbox") == refreshed)
        #expect(try await live.refreshStatus(first.refreshToken!) == "invalid_grant", "the old one is dead at the provider")
    }

    @Test func aRotatedRefreshTokenIsKeptWhenSavingItFails() async throws {
        let live = try await LiveSandbox()
        let first = try await live.signIn(live.session())
        let store = FailingStore(live.store)
        let later = AuthSession(
            configuration: live.configuration, store: store, tokenClient: live.tokenClient(), logger: live.log.logger,
            now: anHourLater)
        store.failing = true
        let refreshed = try await later.freshToken()
        #expect(refreshed.refreshToken != first.refreshToken, "the provider rotated it")
        #expect(await later.storageProblem?.contains("could not be saved") == true)
        #expect(try live.store.load(for: "sandbox") == first, "the file still holds the old one")

        // The next refresh uses the rotated token, not the dead one (whose replay would revoke the grant).
        store.failing = false
        let again = try await later.replacement(forRejected: refreshed)
        #expect(again.accessToken != refreshed.accessToken)
        #expect(try live.store.load(for: "sandbox") == again, "saved once the store works again")
        #expect(await later.storageProblem == nil)
    }

    @Test func aRefreshedIDTokenThatFailsItsChecksCostsOnlyItself() async throws {
        let live = try await LiveSandbox()
        let first = try await live.signIn(live.session())
        // Three hours on, the sandbox's fresh ID token (an hour long) looks expired.
        let muchLater = live.session(now: { Date().addingTimeInterval(3 * 3600) })
        let refreshed = try await muchLater.freshToken()
        #expect(refreshed.refreshToken != first.refreshToken)
        #expect(refreshed.idToken == first.idToken, "the sign-in's ID token stays; the failing one is dropped")
        #expect(try live.store.load(for: "sandbox") == refreshed)
        #expect(try await muchLater.replacement(forRejected: refreshed).accessToken != refreshed.accessToken, "the grant lives")
    }

    @Test func aProfileAboutSomeoneElseThanTheIDTokenIsNotShown() async throws {
        let live = try await LiveSandbox()
        let ada = try await live.signIn(live.session())
        let (request, response) = try await live.authorize(FormPostingUserAgent(username: "grace", password: "compiler"))
        let grace = try await live.tokenClient().exchange(response, for: request)
        // Ada's access token beside Grace's ID token: the userinfo answer is about Ada.
        var mixed = ada
        mixed.idToken = grace.idToken
        let session = live.session()
        try await session.signIn(with: mixed)
        let error = await #expect(throws: OAuthError.self) { try await live.profiles.fetch(using: session) }
        #expect(error == .profileOfSomeoneElse)
        try await session.signIn(with: ada)
        #expect(try await live.profiles.fetch(using: session).name == "Ada Lovelace", "the matching pair is shown")
    }

    @Test func aStoredSignInIsNeverSentToAnotherTokenEndpoint() async throws {
        let live = try await LiveSandbox()
        let token = try await live.signIn(live.session())
        #expect(token.issuedBy == "latchkey-desktop at http://127.0.0.1/token", "a loopback port is not part of it")
        // The same provider id, now described with another token endpoint (a planted
        // preset, an edited file): the refresh due an hour later must not go there.
        let elsewhere = try await RunningSandbox.start(["--behave-like", "gitlab"])
        var moved = live.configuration
        moved.tokenEndpoint = URL(string: "\(elsewhere.baseURL)/oauth/token")!
        let session = AuthSession(
            configuration: moved, store: live.store,
            tokenClient: TokenClient(configuration: moved, network: Network(logger: live.log.logger)),
            logger: live.log.logger, now: anHourLater)
        #expect(await !session.isSignedIn)
        let error = await #expect(throws: OAuthError.self) { try await session.freshToken() }
        guard case .signedOut? = error else {
            Issue.record("expected signedOut, got \(String(describing: error))")
            return
        }
        #expect(await session.storeWarning?.contains("not sent there") == true)
        #expect(try await elsewhere.statistics()["token_requests"] == 0, "nothing reached the other endpoint")
        #expect(try live.store.load(for: "sandbox") == token, "the sign-in is kept for the setup that made it")
        // The sandbox child's new port at the next launch is the same provider.
        var relaunched = live.configuration
        relaunched.tokenEndpoint = URL(string: "http://127.0.0.1:1/token")!
        #expect(relaunched.tokenBinding == live.configuration.tokenBinding)
    }

    @Test func aTokenOfUnknownOriginIsNotUsed() async throws {
        let live = try await LiveSandbox()
        try live.store.save(Token(accessToken: "at-from-an-older-file", refreshToken: "rt-from-an-older-file"), for: "sandbox")
        #expect(await !live.session().isSignedIn)
    }

    @Test func aHundredConcurrentCallersShareOneRefresh() async throws {
        let live = try await LiveSandbox()
        _ = try await live.signIn(live.session())
        let later = live.session(now: anHourLater)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await later.freshToken().accessToken } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1, "every caller got the same new token")
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 1)
    }

    @Test func aRefreshThatFailsForAPassingReasonKeepsTheRefreshToken() async throws {
        let live = try await LiveSandbox()
        let first = try await live.signIn(live.session())
        let later = live.session(now: anHourLater)
        try await live.sandbox.setFault("token", "500")
        let error = await #expect(throws: OAuthError.self) { try await later.freshToken() }
        #expect(error == .httpStatus(500, endpoint: .token))
        #expect(error?.isTransient == true)
        #expect(try live.store.load(for: "sandbox") == first, "nothing lost")
        #expect(try await later.freshToken().accessToken != first.accessToken, "the next try works")
    }

    @Test func aRefusedRefreshSignsOutAndSaysWhy() async throws {
        let live = try await LiveSandbox()
        let first = try await live.signIn(live.session())
        try await live.revokeAtProvider(first.refreshToken!)
        let later = live.session(now: anHourLater)
        let error = await #expect(throws: OAuthError.self) { try await later.freshToken() }
        guard case .signedOut(let reason)? = error else {
            Issue.record("expected signedOut, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("no longer accepts your sign-in"))
        #expect(try live.store.load(for: "sandbox") == nil)
        #expect(await later.isSignedIn == false)
    }

    @Test func signOutForgetsHereAndRevokesAtTheProvider() async throws {
        let live = try await LiveSandbox()
        let session = live.session()
        let token = try await live.signIn(session)
        #expect(await session.signOut() == nil)
        #expect(try live.store.load(for: "sandbox") == nil)
        #expect(try await live.refreshStatus(token.refreshToken!) == "invalid_grant")
        #expect(try await live.sandbox.statistics()["revocation_requests"] == 1)
    }

    @Test func signingOutOverADamagedStoreSaysWhereTheDamageWent() async throws {
        let live = try await LiveSandbox()
        try FileManager.default.createDirectory(at: live.directory, withIntermediateDirectories: true)
        let file = live.directory.appendingPathComponent("sandbox.json")
        try Data(#"{"access_token": "#.utf8).write(to: file)
        let warning = await live.session().signOut()
        #expect(warning?.hasPrefix("Signed out. Trouble with the saved sign-in:") == true)
        #expect(warning?.contains("sandbox.json.corrupt") == true)
        #expect(FileManager.default.fileExists(atPath: file.path + ".corrupt"), "set aside, not deleted")
        #expect(try await live.sandbox.statistics()["revocation_requests"] == 0, "nothing to revoke")
    }

    @Test func signOutStandsEvenWhenRevocationFails() async throws {
        let live = try await LiveSandbox()
        let session = live.session()
        _ = try await live.signIn(session)
        try await live.sandbox.setFault("revoke", "500")
        let warning = await session.signOut()
        #expect(warning?.contains("could not be told") == true)
        #expect(try live.store.load(for: "sandbox") == nil)
    }

    @Test func aRefusedAccessTokenIsRefreshedOnceAndTheProfileFetchedAgain() async throws {
        let live = try await LiveSandbox()
        let session = live.session()
        let token = try await live.signIn(session)
        try await live.revokeAtProvider(token.accessToken)
        let profile = try await within(15) { try await live.profiles.fetch(using: session) }
        #expect(profile.name == "Ada Lovelace")
        let stats = try await live.sandbox.statistics()
        #expect(stats["userinfo_requests"] == 2)
        #expect(stats["refresh_grants"] == 1)
    }

    @Test func whenTheProviderRefusesEverythingTheProfileSaysSignedOut() async throws {
        let live = try await LiveSandbox()
        let session = live.session()
        let token = try await live.signIn(session)
        try await live.revokeAtProvider(token.refreshToken!)
        let error = await #expect(throws: OAuthError.self) { try await live.profiles.fetch(using: session) }
        guard case .signedOut? = error else {
            Issue.record("expected signedOut, got \(String(describing: error))")
            return
        }
        #expect(try live.store.load(for: "sandbox") == nil)
    }

    /// Each sandbox fault at the token endpoint, then the same code again: the
    /// fault answered instead of the server, so the code is still good.
    @Test(arguments: [
        ("500", OAuthError.httpStatus(500, endpoint: .token)),
        ("html", OAuthError.htmlInsteadOfJSON(endpoint: .token)),
        ("empty", OAuthError.emptyResponse(endpoint: .token)),
        ("truncated", OAuthError.connectionLost(endpoint: .token)),
        ("delay", OAuthError.timedOut(endpoint: .token)),
        ("close", OAuthError.connectionLost(endpoint: .token)),
    ])
    func eachTokenEndpointFaultIsAClearErrorAndTheNextTryWorks(kind: String, expected: OAuthError) async throws {
        let live = try await LiveSandbox()
        let (request, response) = try await live.authorize()
        // A delayed answer is the proper one, late: it must not come before the next try, however slow
        // the machine (it came after 3 s once, with the CPU hogged, and the code was used up).
        try await live.sandbox.setFault("token", kind, delaySeconds: 300)
        let error = await #expect(throws: OAuthError.self) {
            try await within(20) { try await live.tokenClient(timeout: 1).exchange(response, for: request) }
        }
        #expect(error == expected, "\(kind): \(String(describing: error))")
        #expect(error?.isTransient == true)
        #expect(String(describing: error!).hasSuffix("."))
        let token = try await live.tokenClient().exchange(response, for: request)
        #expect(!token.accessToken.isEmpty)
    }

    @Test func aProviderThatIsNotThereCannotBeReached() async throws {
        let live = try await LiveSandbox()
        var configuration = live.configuration
        configuration.tokenEndpoint = URL(string: "http://127.0.0.1:9/token")!
        let (request, response) = try await live.authorize()
        let error = await #expect(throws: OAuthError.self) {
            try await TokenClient(configuration: configuration, network: Network(timeout: 5)).exchange(response, for: request)
        }
        #expect(error == .cannotConnect(endpoint: .token))
    }

    @Test func profileEndpointFaultsAreNamedForTheProfile() async throws {
        let live = try await LiveSandbox()
        let session = live.session()
        _ = try await live.signIn(session)
        try await live.sandbox.setFault("userinfo", "html")
        let error = await #expect(throws: OAuthError.self) { try await live.profiles.fetch(using: session) }
        #expect(error == .htmlInsteadOfJSON(endpoint: .profile))
        #expect(try await live.profiles.fetch(using: session).name == "Ada Lovelace")
    }
}

/// The sequence's promises to a user agent that names its own redirect URI (the
/// browser's listener port): the request carries it, and a `present` that fails
/// is still followed by `dismiss`, so the agent can close what it opened.
@Suite struct UserAgentContractTests {
    final class BrowserLikeAgent: ExternalUserAgent, @unchecked Sendable {
        private let lock = NSLock()
        private var _presented: URL?
        private var _dismissals = 0
        let presentFails: Bool
        init(presentFails: Bool) { self.presentFails = presentFails }
        var presented: URL? { lock.withLock { _presented } }
        var dismissals: Int { lock.withLock { _dismissals } }

        func redirectURI(for configuration: ProviderConfiguration) async throws -> URL {
            var components = URLComponents(url: configuration.redirectURI, resolvingAgainstBaseURL: false)!
            components.port = 50555
            return components.url!
        }

        func present(_ flow: any SignInFlow) async throws {
            lock.withLock { _presented = flow.authorizationURL }
            if presentFails { throw OAuthError.browser("your web browser could not be opened.") }
            flow.cancel()
        }

        func dismiss(_ flow: any SignInFlow) async { lock.withLock { _dismissals += 1 } }
    }

    @Test func theRequestCarriesTheRedirectURIThatTheAgentNamed() async throws {
        let live = try await LiveSandbox()
        let agent = BrowserLikeAgent(presentFails: false)
        await #expect(throws: OAuthError.cancelled) { try await live.session().signIn(using: agent) }
        let url = try #require(agent.presented)
        #expect(Fixtures.query(url)["redirect_uri"] == "http://127.0.0.1:50555/callback")
        #expect(agent.dismissals == 1)
    }

    @Test func aPresentThatFailsIsDismissedAndKeepsNothing() async throws {
        let live = try await LiveSandbox()
        let agent = BrowserLikeAgent(presentFails: true)
        await #expect(throws: OAuthError.browser("your web browser could not be opened.")) {
            try await live.session().signIn(using: agent)
        }
        #expect(agent.dismissals == 1, "the agent closes what redirectURI(for:) opened")
        #expect(await !live.session().isSignedIn)
    }
}
