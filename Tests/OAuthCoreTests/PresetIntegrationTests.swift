import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// Each shipped preset, as it ships, against the sandbox behaving like its
/// provider: the preset's own choices are what is tested.
@Suite struct LinkedInPresetTests {
    func linkedIn() async throws -> PresetOnSandbox {
        try await PresetOnSandbox("linkedin", credentials: PresetOnSandbox.confidential)
    }

    /// The whole sign-in with the preset changed by `change`: how it fails (nil if it does not).
    func failure(changing change: (inout ProviderConfiguration) -> Void) async throws -> OAuthError? {
        let live = try await linkedIn()
        var changed = live.configuration
        change(&changed)
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: changed))
        try await FormPostingUserAgent().present(flow)
        let response = try await flow.response()
        do {
            _ = try await TokenClient(configuration: changed, network: Network(logger: live.log.logger)).exchange(
                response, for: flow.request)
            return nil
        } catch let error as OAuthError {
            return error
        }
    }

    /// The defect this preset had: a nonce was sent and required back, and
    /// LinkedIn's ID tokens never carry one, so every real sign-in failed.
    @Test func signsInThoughItsIDTokensCarryNoNonce() async throws {
        let live = try await linkedIn()
        let (request, response) = try await live.authorize()
        #expect(request.nonce == nil, "no nonce is sent to a provider that never returns it")
        #expect(request.codeVerifier == nil, "LinkedIn's standard apps refuse PKCE")
        let query = Fixtures.query(request.url)
        #expect(query["nonce"] == nil && query["code_challenge"] == nil)
        let token = try await live.tokenClient().exchange(response, for: request)
        #expect(token.idToken != nil, "an ID token whose issuer, audience and expiry were checked")
        #expect(token.scope == "openid profile email", "LinkedIn's comma-separated scope, read as a list")
        #expect(!token.canRefresh, "refresh tokens are for LinkedIn's approved partners only")
        let lifetime = try #require(token.expiresAt).timeIntervalSinceNow
        #expect(abs(lifetime - 5_184_000) < 60, "LinkedIn's access tokens live 60 days")
    }

    @Test func theSameSignInFailsWhenTheNonceIsRequired() async throws {
        // What every real LinkedIn sign-in met before the preset said "nonce": false.
        let error = try await failure { $0.useNonce = true }
        #expect(error == .invalidIDToken("it does not belong to this sign-in"))
    }

    @Test func withPKCEOnAStandardAppTheExchangeFails() async throws {
        // Why the preset says "pkce": false.
        let error = try await failure { $0.usePKCE = true }
        guard case .invalidClient? = error else {
            Issue.record("expected invalidClient, got \(String(describing: error))")
            return
        }
    }

    @Test func theProfileHasNoLinkAndSaysWhy() async throws {
        let live = try await linkedIn()
        let session = live.session()
        _ = try await live.signIn(into: session)
        let profile = try await live.profiles.fetch(using: session)
        #expect(profile.name == "Ada Lovelace")
        #expect(profile.email == "ada@sandbox.example")
        #expect(profile.emailVerified == true)
        #expect(profile.pictureURL?.absoluteString == "\(live.sandbox.baseURL)/avatar/ada.svg")
        #expect(profile.profileURL == nil, "/v2/me is closed to an OpenID-only app; the URL is never built from sub")
        #expect(profile.note?.contains("r_basicprofile") == true)
        #expect(try await live.sandbox.statistics()["userinfo_requests"] == 2, "userinfo, then the closed /v2/me")
    }

    @Test func cancelOnItsConsentPageIsACancel() async throws {
        let live = try await linkedIn()
        let error = await #expect(throws: OAuthError.self) { try await live.authorize(FormPostingUserAgent(action: "deny")) }
        #expect(error == .cancelled, "user_cancelled_authorize")
    }

    @Test func itsSecretGoesInTheBodyOnly() async throws {
        let error = try await failure { $0.clientAuthentication = .clientSecretBasic }
        guard case .tokenEndpoint(code: "invalid_request", _)? = error else {
            Issue.record("expected invalid_request, got \(String(describing: error))")
            return
        }
        #expect(try await linkedIn().configuration.clientAuthentication == .clientSecretPost, "the preset sends it in the body")
    }

    @Test func theMovedPresetDiffersFromTheShippedOneOnlyInItsHosts() async throws {
        let live = try await linkedIn()
        let shipped = try ProviderCatalog(
            presetDirectories: [Fixtures.presetDirectory], userConfigDirectory: URL(fileURLWithPath: "/nonexistent"),
            environment: ["LATCHKEY_LINKEDIN_CLIENT_ID": "latchkey-confidential", "LATCHKEY_LINKEDIN_CLIENT_SECRET": "sandbox-secret"],
            credentialPrefix: "LATCHKEY"
        ).configuration(named: "linkedin")
        var moved = live.configuration
        moved.issuer = shipped.issuer
        moved.authorizationEndpoint = shipped.authorizationEndpoint
        moved.tokenEndpoint = shipped.tokenEndpoint
        moved.userinfoEndpoint = shipped.userinfoEndpoint
        moved.jwksURI = shipped.jwksURI
        moved.profile.urlTemplateEndpoint = shipped.profile.urlTemplateEndpoint
        #expect(moved == shipped)
        #expect(live.configuration.profile.urlTemplate == "https://www.linkedin.com/in/{vanityName}")
    }
}

@Suite struct GitHubPresetTests {
    func gitHub() async throws -> PresetOnSandbox {
        try await PresetOnSandbox("github", credentials: PresetOnSandbox.confidential)
    }

    @Test func signsInWithPKCEAndASecretAndGetsANonExpiringToken() async throws {
        let live = try await gitHub()
        // GitHub's loopback redirects may carry any port.
        let (request, response) = try await live.authorize(redirectURI: URL(string: "http://127.0.0.1:48213/callback")!)
        #expect(request.codeVerifier != nil)
        let token = try await live.tokenClient().exchange(response, for: request)
        #expect(token.expiresAt == nil, "OAuth-app tokens state no lifetime")
        #expect(!token.canRefresh)
        #expect(token.scope == "read:user user:email", "GitHub's comma-separated scope, read as a list")
        #expect(token.idToken == nil)
    }

    @Test func theProfileFallsBackToTheLoginWhenTheNameIsNull() async throws {
        let live = try await gitHub()
        let ada = live.session()
        _ = try await live.signIn(into: ada)
        let profile = try await live.profiles.fetch(using: ada)
        #expect(profile.name == "Ada Lovelace")
        #expect(profile.profileURL?.absoluteString == "\(live.sandbox.baseURL)/ada")
        #expect(profile.pictureURL?.absoluteString == "\(live.sandbox.baseURL)/avatar/ada.svg")

        let grace = PresetOnSandboxSecondUser(live)
        _ = try await live.signIn(FormPostingUserAgent(username: "grace", password: "compiler"), into: grace.session)
        let hers = try await live.profiles.fetch(using: grace.session)
        #expect(hers.name == "grace", "name is null for her: the login stands in")
        #expect(hers.email == nil, "her e-mail is private")
        #expect(hers.profileURL?.absoluteString == "\(live.sandbox.baseURL)/grace")
    }

    @Test func aCodeUsedTwiceIsRefusedAsInvalidGrantThoughGitHubSays200() async throws {
        let live = try await gitHub()
        let (request, response) = try await live.authorize()
        _ = try await live.tokenClient().exchange(response, for: request)
        // The same code again: GitHub answers 200 with error=bad_verification_code.
        let error = await #expect(throws: OAuthError.self) { try await live.tokenClient().exchange(response, for: request) }
        guard case .invalidGrant(let description)? = error else {
            Issue.record("expected invalidGrant (bad_verification_code), got \(String(describing: error))")
            return
        }
        #expect(description?.isEmpty == false)
    }

    @Test func aWrongSecretIsInvalidClient() async throws {
        let live = try await PresetOnSandbox(
            "github", credentials: ["client_id": "latchkey-confidential", "client_secret": "not-the-secret"])
        let (request, response) = try await live.authorize()
        let error = await #expect(throws: OAuthError.self) { try await live.tokenClient().exchange(response, for: request) }
        guard case .invalidClient? = error else {
            Issue.record("expected invalidClient (incorrect_client_credentials), got \(String(describing: error))")
            return
        }
    }

    @Test func denyIsACancel() async throws {
        let live = try await gitHub()
        let error = await #expect(throws: OAuthError.self) { try await live.authorize(FormPostingUserAgent(action: "deny")) }
        #expect(error == .cancelled)
    }
}

@Suite struct GitLabPresetTests {
    func gitLab() async throws -> PresetOnSandbox {
        try await PresetOnSandbox("gitlab", credentials: PresetOnSandbox.publicClient)
    }

    @Test func aPublicClientSignsInThroughItsPrivateUseSchemeAndRefreshes() async throws {
        let live = try await gitLab()
        #expect(live.userFile.keys.sorted() == ["client_id", "issuer"], "endpoints are paths under the issuer")
        let session = live.session()
        let first = try await live.signIn(into: session)
        #expect(first.canRefresh)
        let lifetime = try #require(first.expiresAt).timeIntervalSinceNow
        #expect(abs(lifetime - 7200) < 60, "GitLab's access tokens live two hours")
        let refreshed = try await live.session(now: { Date().addingTimeInterval(7200) }).freshToken()
        #expect(refreshed.refreshToken != first.refreshToken, "GitLab rotates refresh tokens")
        let profile = try await live.profiles.fetch(using: live.session())
        #expect(profile.name == "Ada Lovelace")
        #expect(profile.email == "ada@sandbox.example")
        #expect(profile.profileURL?.absoluteString == "\(live.sandbox.baseURL)/ada")
    }

    @Test func signOutRevokesTheGrant() async throws {
        let live = try await gitLab()
        let session = live.session()
        let token = try await live.signIn(into: session)
        #expect(await session.signOut() == nil)
        let reply = try await HTTPClient().postForm(
            "\(live.sandbox.baseURL)/oauth/token",
            [("grant_type", "refresh_token"), ("refresh_token", token.refreshToken!), ("client_id", "latchkey-desktop")])
        #expect(reply.error == "invalid_grant")
    }

    @Test func denyIsACancel() async throws {
        let live = try await gitLab()
        let error = await #expect(throws: OAuthError.self) { try await live.authorize(FormPostingUserAgent(action: "deny")) }
        #expect(error == .cancelled)
    }
}

@Suite struct MicrosoftPresetTests {
    func microsoft() async throws -> PresetOnSandbox {
        try await PresetOnSandbox("microsoft", credentials: PresetOnSandbox.publicClient)
    }

    @Test func anIDTokenNamingTheUsersTenantIsAcceptedThroughCommon() async throws {
        let live = try await microsoft()
        let session = live.session()
        let token = try await live.signIn(redirectURI: URL(string: "http://127.0.0.1:50123/callback")!, into: session)
        #expect(token.idToken != nil)
        #expect(token.canRefresh, "offline_access gives a refresh token")
        let refreshed = try await live.session(now: { Date().addingTimeInterval(3600) }).freshToken()
        #expect(refreshed.accessToken != token.accessToken)
        let profile = try await live.profiles.fetch(using: live.session())
        #expect(profile.name == "Ada Lovelace")
        #expect(profile.profileURL == nil)
        #expect(profile.note == "Microsoft accounts have no public profile page.")
    }

    @Test func denyIsACancel() async throws {
        let live = try await microsoft()
        let error = await #expect(throws: OAuthError.self) { try await live.authorize(FormPostingUserAgent(action: "deny")) }
        #expect(error == .cancelled)
    }
}

/// A second person's session over the same preset and sandbox, with its own store.
struct PresetOnSandboxSecondUser {
    let session: AuthSession
    let directory: TemporaryDirectory

    init(_ live: PresetOnSandbox) {
        directory = try! TemporaryDirectory()
        session = AuthSession(
            configuration: live.configuration, store: FileTokenStore(directory: directory.url, logger: live.log.logger),
            tokenClient: live.tokenClient(), logger: live.log.logger)
    }
}

/// Google, for a "Desktop app" client: the system browser with a loopback redirect
/// (embedded views are refused), PKCE with the client secret in the body,
/// `access_type=offline` for a refresh token.
@Suite struct GooglePresetTests {
    func google() async throws -> PresetOnSandbox {
        try await PresetOnSandbox("google", credentials: PresetOnSandbox.confidential)
    }

    @Test func signsInThroughTheBrowserOnlyWithPKCEAndTheSecretInTheBody() async throws {
        let live = try await google()
        #expect(live.configuration.userAgents == [.browser] && live.configuration.userAgent == .browser)
        let request = AuthorizationRequest(
            configuration: live.configuration, redirectURI: URL(string: "http://127.0.0.1:50124/callback")!)
        let query = Fixtures.query(request.url)
        #expect(query["access_type"] == "offline" && query["code_challenge_method"] == "S256" && query["nonce"] != nil)
        let token = try await live.session().signIn(using: FormPostingUserAgent(), request: request).token
        #expect(token.canRefresh, "access_type=offline gives a refresh token")
        #expect(token.idToken != nil)
        let refreshed = try await live.session(now: { Date().addingTimeInterval(3600) }).freshToken()
        #expect(refreshed.accessToken != token.accessToken)
        #expect(live.configuration.clientAuthentication == .clientSecretPost)
    }

    @Test func theProfileHasNoLinkAndSaysWhy() async throws {
        let live = try await google()
        _ = try await live.signIn(redirectURI: URL(string: "http://127.0.0.1:50125/callback")!, into: live.session())
        let profile = try await live.profiles.fetch(using: live.session())
        #expect(profile.name == "Ada Lovelace" && profile.email != nil)
        #expect(profile.profileURL == nil)
        #expect(profile.note == "Google accounts have no public profile page.")
    }

    @Test func choosingTheEmbeddedViewIsRefusedWithASentence() async throws {
        let live = try await google()
        var user = live.userFile
        user["user_agent"] = "embedded"
        let data = try JSONSerialization.data(withJSONObject: user)
        try data.write(to: live.directory.url.appendingPathComponent("google.json"))
        let error = #expect(throws: OAuthError.self) {
            try Fixtures.catalog(userDirectory: live.directory.url).configuration(named: "google")
        }
        #expect(error?.description.contains("allows only \"browser\"") == true)
    }
}

/// The presets whose providers publish a JWK Set check each ID token's signature
/// against it, with RS256 pinned: the sandbox imitating each serves its keys at the
/// provider's own path, and a token signed otherwise (ES256) is refused.
@Suite struct PresetSignatureTests {
    static let presets: [(String, [String: String], String?)] = [
        ("linkedin", PresetOnSandbox.confidential, nil), ("gitlab", PresetOnSandbox.publicClient, nil),
        ("microsoft", PresetOnSandbox.publicClient, nil), ("google", PresetOnSandbox.confidential, "http://127.0.0.1:50126/callback"),
    ]

    @Test(arguments: 0..<4) func idTokensAreCheckedAgainstTheProvidersOwnKeys(_ index: Int) async throws {
        let (name, credentials, redirect) = Self.presets[index]
        let redirectURI = redirect.flatMap(URL.init(string:))
        let live = try await PresetOnSandbox(name, credentials: credentials)
        #expect(live.configuration.idTokenSigningAlgorithms == ["RS256"])
        let keys = try #require(live.configuration.jwksURI)
        #expect(keys.absoluteString.hasPrefix(live.sandbox.baseURL + "/"), "moved with the rest: \(keys)")
        #expect(try await HTTPClient().get(keys.absoluteString).status == 200, "the likeness serves its keys at \(keys.path)")
        let (request, response) = try await live.authorize(redirectURI: redirectURI)
        #expect(try await live.tokenClient().exchange(response, for: request).idToken != nil)

        let other = try await PresetOnSandbox(name, credentials: credentials, sandboxArguments: ["--id-token-alg", "ES256"])
        let (otherRequest, otherResponse) = try await other.authorize(redirectURI: redirectURI)
        let error = await #expect(throws: OAuthError.self) { try await other.tokenClient().exchange(otherResponse, for: otherRequest) }
        #expect("\(error!)".contains("identity token is not valid") && "\(error!)".contains("ES256"), "\(error!)")
    }
}
