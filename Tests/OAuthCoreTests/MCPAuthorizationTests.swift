import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// The MCP authorization specification, revision 2026-07-28, as it asks of a client: each
/// situation played by the real sandbox (`--iss`, `--issuer-path`, `--metadata-at`,
/// `--resource-metadata-at`), and OAuthCore driven from a resource's URL to a token.
@Suite struct MCPAuthorizationTests {
    /// The sandbox playing a situation, and a home to reach it from.
    struct Setting {
        let sandbox: RunningSandbox
        let local: ZeroConfigurationHome

        init(_ arguments: [String]) async throws {
            sandbox = try await RunningSandbox.start(arguments)
            local = try ZeroConfigurationHome()
        }

        var home: TemporaryDirectory { local.home }
        var catalog: ProviderCatalog { local.catalog }
        var providers: ZeroConfiguration { local.providers }

        func url(_ path: String) -> URL { URL(string: sandbox.baseURL + path)! }

        func statistics() async throws -> [String: Any] {
            try await HTTPClient().get(sandbox.baseURL + "/_admin/stats").json
        }

        /// The well-known paths a client asked for, in order, those of `kind` only.
        func asked(_ kind: String) async throws -> [String] {
            (try await statistics()["well_known_paths"] as? [String] ?? []).filter { $0.contains(kind) }
        }

        /// From the resource's URL to a token, as `latchkey token --resource` goes.
        func signIn(_ path: String) async throws -> (ProviderConfiguration, Token) {
            let configuration = try await providers.configuration(for: url(path)).configuration
            let session = AuthSession(configuration: configuration, store: MemoryTokenStore())
            return (configuration, try await session.signIn(using: FormPostingUserAgent()).token)
        }
    }

    // MARK: iss (RFC 9207), compared octet for octet

    @Test(arguments: ["sent", "unadvertised"])
    func anAnswerNamingItsServerExactlyOrNotAtAllWhenNotPromisedIsTaken(mode: String) async throws {
        let setting = try await Setting(["--iss", mode])
        let (configuration, token) = try await setting.signIn("/api/me")
        #expect(configuration.requiresIssuerInResponse == (mode == "sent"))
        #expect(
            try await HTTPClient().get(setting.url("/api/me").absoluteString, headers: ["Authorization": "Bearer \(token.accessToken)"])
                .status == 200)
    }

    /// Refused before the code goes anywhere: no token request reaches the server.
    @Test(arguments: [
        ("absent", OAuthError.issuerMissing), ("wrong", .issuerMismatch), ("slash", .issuerMismatch),
        ("unadvertised-wrong", .issuerMismatch),
    ])
    func anAnswerWithoutTheExactIssuerIsRefused(mode: String, expected: OAuthError) async throws {
        let setting = try await Setting(["--iss", mode])
        let error = await #expect(throws: OAuthError.self) { _ = try await setting.signIn("/api/me") }
        #expect(error == expected, "\(mode): \(String(describing: error))")
        #expect(try await setting.statistics()["token_requests"] as? Int == 0, "the code never reached the token endpoint")
    }

    /// An error answer with the wrong iss is not read either: its words are not shown.
    @Test func anErrorWithTheWrongIssuerIsNotShown() throws {
        var configuration = try Fixtures.configuration()
        configuration.issuer = URL(string: "https://id.example")
        let request = AuthorizationRequest(configuration: configuration)
        let url = URL(
            string:
                "https://app.example/callback?error=server_error&error_description=Call%20this%20number&state=\(request.state)&iss=https%3A%2F%2FID.example"
        )!
        #expect(throws: OAuthError.issuerMismatch) { try AuthorizationResponse(redirectURL: url, for: request) }
    }

    // MARK: Where metadata is looked for

    /// With a path, the issuer's metadata is looked for at RFC 8414's location, then OpenID
    /// Connect's inserted, then OpenID Connect's appended — never where the path is dropped.
    @Test(arguments: [
        ("oauth", ["/.well-known/oauth-authorization-server/tenant1"]),
        ("oidc-inserted", ["/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1"]),
        (
            "oidc-appended",
            [
                "/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1",
                "/tenant1/.well-known/openid-configuration",
            ]
        ),
    ])
    func anIssuerWithAPathIsLookedUpInTheSpecificationsOrder(location: String, expected: [String]) async throws {
        let setting = try await Setting(["--issuer-path", "/tenant1", "--metadata-at", location])
        let (configuration, token) = try await setting.signIn("/api/me")
        #expect(configuration.issuer?.absoluteString == setting.sandbox.baseURL + "/tenant1")
        #expect(!token.accessToken.isEmpty)
        let asked = (try await setting.statistics()["well_known_paths"] as? [String] ?? []).filter { !$0.contains("protected-resource") }
        #expect(asked == expected, "in that order, and nowhere else: \(asked)")
    }

    @Test func anIssuerWithoutAPathIsLookedUpAtRFC8414sLocationThenOpenIDConnects() async throws {
        let setting = try await Setting(["--metadata-at", "oidc-inserted"])
        _ = try await setting.signIn("/api/me")
        #expect(
            try await setting.asked("authorization-server") + (try await setting.asked("openid-configuration"))
                == ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"])
    }

    /// An issuer typed as the server names itself costs one read of its metadata (a look-up for a
    /// slash more or less once cost every new issuer a second).
    @Test func anIssuerTypedExactlyIsReadOnce() async throws {
        let setting = try await Setting([])
        _ = try await setting.providers.prepare(issuer: setting.sandbox.baseURL)
        #expect(try await setting.asked("well-known") == ["/.well-known/oauth-authorization-server"])
    }

    /// An issuer a person types with a slash more than the server names itself with is taken as the
    /// server names it, then checked exactly; its metadata is read once more for it.
    @Test func anIssuerTypedWithASlashMoreIsTakenAsTheServerNamesIt() async throws {
        let setting = try await Setting([])
        let id = try await setting.providers.prepare(issuer: setting.sandbox.baseURL + "/").id
        #expect(try setting.catalog.draft(named: id).issuer?.absoluteString == setting.sandbox.baseURL)
        #expect(
            try await setting.asked("authorization-server") == [
                "/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server",
            ])
    }

    /// A document that names its issuer with a slash more is another issuer's.
    @Test func aDocumentNamingTheIssuerWithASlashMoreIsNotUsed() throws {
        let document: JSONValue = ["issuer": "https://id.example/", "authorization_endpoint": "https://id.example/a"]
        #expect(throws: OAuthError.self) { try ProviderDiscovery.checkedIssuer(document, issuer: "https://id.example") }
        #expect(throws: OAuthError.self) {
            try ProviderDiscovery.checkedIssuer(["issuer": "HTTPS://id.example"], issuer: "https://id.example")
        }
        #expect(throws: Never.self) { try ProviderDiscovery.checkedIssuer(["issuer": "https://id.example"], issuer: "https://id.example") }
    }

    /// A resource's metadata: where the challenge names it, else with the path inserted, else at the origin.
    @Test(arguments: [
        ("named", ["/.well-known/oauth-protected-resource/api/me"]),
        ("custom", ["/custom/resource-metadata/api/me.json"]),
        ("path", ["/.well-known/oauth-protected-resource/api/me"]),
        ("root", ["/.well-known/oauth-protected-resource/api/me", "/.well-known/oauth-protected-resource"]),
    ])
    func aResourcesMetadataIsLookedForInTheSpecificationsOrder(location: String, expected: [String]) async throws {
        let setting = try await Setting(["--resource-metadata-at", location])
        let (configuration, token) = try await setting.signIn("/api/me")
        #expect(try await setting.asked("resource") == expected)
        // Found at the origin, it is about the origin: the token's audience is what the metadata says.
        let audience = location == "root" ? setting.sandbox.baseURL : setting.sandbox.baseURL + "/api/me"
        #expect(configuration.resource?.absoluteString == audience)
        let answer = try await HTTPClient().get(
            setting.url("/api/me").absoluteString, headers: ["Authorization": "Bearer \(token.accessToken)"])
        #expect(answer.status == 200, "\(answer.text)")
    }

    /// Metadata about another origin's resource is refused wherever it was found.
    @Test func metadataAboutAnotherResourceIsRefused() throws {
        let me = URL(string: "https://api.example/mcp")!
        let other: JSONValue = ["resource": "https://evil.example/mcp", "authorization_servers": ["https://id.example"]]
        #expect(throws: OAuthError.self) { try ResourceDiscovery.metadata(from: other, for: me, challengeScopes: nil, mayBeAbove: true) }
        let above: JSONValue = ["resource": "https://api.example", "authorization_servers": ["https://id.example"]]
        #expect(throws: OAuthError.self) { try ResourceDiscovery.metadata(from: above, for: me, challengeScopes: nil, mayBeAbove: false) }
        #expect(
            try ResourceDiscovery.metadata(from: above, for: me, challengeScopes: nil, mayBeAbove: true).resource.absoluteString
                == "https://api.example")
        let sibling: JSONValue = ["resource": "https://api.example/mc", "authorization_servers": ["https://id.example"]]
        #expect(throws: OAuthError.self) { try ResourceDiscovery.metadata(from: sibling, for: me, challengeScopes: nil, mayBeAbove: true) }
    }

    // MARK: Scopes

    /// The challenge's scope first (with offline_access where the server lists it); none said
    /// anywhere, no scope parameter at all.
    @Test func scopesComeFromTheChallengeElseTheMetadataElseNowhere() async throws {
        let setting = try await Setting([])
        let (me, _) = try await setting.signIn("/api/me")
        #expect(me.scopes == ["openid", "profile", "offline_access"])
        let (open, token) = try await setting.signIn("/api/open")
        #expect(open.scopes.isEmpty)
        let asked = try await setting.statistics()["authorization_scopes"] as? [String]
        #expect(asked == ["openid profile offline_access", ""], "\(String(describing: asked))")
        #expect(AuthorizationRequest(configuration: open).url.query?.contains("scope=") == false)
        let answer = try await HTTPClient().get(
            setting.url("/api/open").absoluteString, headers: ["Authorization": "Bearer \(token.accessToken)"])
        #expect(answer.status == 200)
    }

    /// PKCE is checked before anything is asked of the person: a server whose metadata does not
    /// say it takes S256 (as LinkedIn's likeness says nothing) is not signed in with.
    @Test func aServerThatDoesNotSayItTakesS256IsNotSignedInWith() async throws {
        let setting = try await Setting(["--behave-like", "linkedin"])
        let error = await #expect(throws: OAuthError.self) { _ = try await setting.providers.configuration(for: setting.url("/api/me")) }
        #expect(String(describing: error!).contains("does not say it supports PKCE with S256"), "\(error!)")
    }

    // MARK: Step-up and refused tokens

    /// What the resource answers `token` with at `path`: status and challenge.
    static func answer(_ setting: Setting, _ path: String, _ token: Token) async throws -> (Int, String?) {
        let reply = try await HTTPClient().get(setting.sandbox.baseURL + path, headers: ["Authorization": "Bearer \(token.accessToken)"])
        return (reply.status, reply.header("www-authenticate"))
    }

    /// 403 insufficient_scope: one new sign-in for the union of the scopes it had and those asked,
    /// kept in the provider file; a refresh never widens a grant (the sandbox refuses that anyway).
    @Test func insufficientScopeSignsInOnceForTheUnion() async throws {
        let setting = try await Setting([])
        let store = MemoryTokenStore()
        let records = ChallengeRecords(directory: setting.home.url.appendingPathComponent("challenges"))
        let configuration = try await setting.providers.configuration(for: setting.url("/api/me")).configuration
        let first = try await AuthSession(configuration: configuration, store: store).signIn(using: FormPostingUserAgent()).token
        let (status, header) = try await Self.answer(setting, "/api/me?detail=email", first)
        #expect(status == 403)
        let challenge = try ResourceChallenge(header: try #require(header))
        #expect(challenge.kind == .insufficientScope && challenge.scopes == ["openid", "profile", "email"])
        let answer = try await setting.providers.answer(challenge, for: setting.url("/api/me"), tokens: store, records: records)
        guard case .signIn(let widened, let reason) = answer else {
            Issue.record("expected a sign-in, got \(answer)")
            return
        }
        #expect(widened.scopes == ["openid", "profile", "offline_access", "email"])
        #expect(reason.contains("asks for more"))
        #expect(try setting.catalog.draft(named: configuration.id).scopes == widened.scopes, "kept in the provider file")
        let second = try await AuthSession(configuration: widened, store: store).signIn(using: FormPostingUserAgent()).token
        #expect(try await Self.answer(setting, "/api/me?detail=email", second).0 == 200)
        #expect(try await setting.statistics()["refresh_grants"] as? Int == 0, "no refresh was used to widen")
        #expect(
            try await setting.statistics()["authorization_scopes"] as? [String] == [
                "openid profile offline_access", "openid profile offline_access email",
            ])
    }

    /// 401: the refused token is renewed with the refresh token, and the renewed one is not the refused one.
    @Test func aRefusedTokenIsRenewedNeverHandedOutAgain() async throws {
        let setting = try await Setting([])
        let store = MemoryTokenStore()
        let configuration = try await setting.providers.configuration(for: setting.url("/api/me")).configuration
        let token = try await AuthSession(configuration: configuration, store: store).signIn(using: FormPostingUserAgent()).token
        _ = try await HTTPClient().postForm(
            setting.sandbox.baseURL + "/revoke", [("token", token.accessToken), ("client_id", configuration.clientID)])
        let (status, header) = try await Self.answer(setting, "/api/me", token)
        #expect(status == 401)
        let answer = try await setting.providers.answer(
            try ResourceChallenge(header: try #require(header)), for: setting.url("/api/me"), tokens: store, records: nil)
        guard case .renewed(let renewed) = answer else {
            Issue.record("expected a renewal, got \(answer)")
            return
        }
        #expect(renewed.accessToken != token.accessToken)
        #expect(try await Self.answer(setting, "/api/me", renewed).0 == 200)
    }

    /// A server that keeps asking is followed three times per resource and scope set, then refused with a sentence.
    @Test func aServerThatKeepsAskingIsFollowedAFewTimesOnly() async throws {
        let setting = try await Setting([])
        let store = MemoryTokenStore()
        let records = ChallengeRecords(directory: setting.home.url.appendingPathComponent("challenges"))
        var configuration = try await setting.providers.configuration(for: setting.url("/api/me")).configuration
        for round in 1...4 {
            let token = try await AuthSession(configuration: configuration, store: store).signIn(using: FormPostingUserAgent()).token
            let (status, header) = try await Self.answer(setting, "/api/me?detail=never", token)
            #expect(status == 403)
            let challenge = try ResourceChallenge(header: try #require(header))
            if round < 4 {
                guard
                    case .signIn(let next, _) = try await setting.providers.answer(
                        challenge, for: setting.url("/api/me"), tokens: store, records: records)
                else {
                    Issue.record("round \(round): no sign-in")
                    return
                }
                configuration = next
            } else {
                let error = await #expect(throws: OAuthError.self) {
                    _ = try await setting.providers.answer(challenge, for: setting.url("/api/me"), tokens: store, records: records)
                }
                #expect(String(describing: error!).contains("answered 3 times"), "\(error!)")
            }
        }
    }

    @Test func aChallengeWithoutBearerIsNotOneToAnswer() throws {
        #expect(throws: OAuthError.self) { try ResourceChallenge(header: #"Basic realm="x""#) }
        #expect(throws: OAuthError.self) { try ResourceChallenge(header: "Bearer error=\"") }
        #expect(try ResourceChallenge(header: #"Bearer error="invalid_token""#).kind == .refused)
    }

    // MARK: Keyed by issuer

    /// The resource moves to another authorization server: the next 401 is how it is noticed. Latchkey
    /// registers anew there and signs in there; the old server's client id never reaches the new one,
    /// and the old grant is revoked where it was issued.
    @Test func aResourceThatMovesIsFollowedWithNothingOfTheOldServer() async throws {
        let setting = try await Setting([])
        let store = MemoryTokenStore()
        let me = setting.url("/api/me")
        let before = try await setting.providers.configuration(for: me).configuration
        let old = try await AuthSession(configuration: before, store: store).signIn(using: FormPostingUserAgent()).token
        _ = try await HTTPClient().send(method: "POST", setting.sandbox.baseURL + "/_admin/move-resources", headers: [:], body: nil)
        let (status, header) = try await Self.answer(setting, "/api/me", old)
        #expect(status == 401 && header?.contains("authorization server has changed") == true)

        let answer = try await setting.providers.answer(
            try ResourceChallenge(header: try #require(header)), for: me, tokens: store, records: nil)
        guard case .signIn(let after, let reason) = answer else {
            Issue.record("expected a sign-in, got \(answer)")
            return
        }
        #expect(after.issuer?.absoluteString == setting.sandbox.baseURL + "/as2")
        #expect(after.clientID != before.clientID && reason.contains("now takes tokens from"))
        #expect(try store.load(for: before.id) == nil, "the old sign-in is forgotten here")
        let token = try await AuthSession(configuration: after, store: store).signIn(using: FormPostingUserAgent()).token
        #expect(try await Self.answer(setting, "/api/me", token).0 == 200)

        let statistics = try await setting.statistics()
        let seen = statistics["second_server_client_ids"] as? [String] ?? []
        #expect(!seen.isEmpty && !seen.contains(before.clientID), "the new server never heard of the old client: \(seen)")
        #expect(statistics["registrations"] as? Int == 2)
        #expect(statistics["revocation_requests"] as? Int == 1, "the old grant was revoked at the old server")
    }

    /// Registered as a native app that wants refresh tokens (application_type, grant_types), and
    /// `resource` named at every token request, the refresh included (RFC 8707 lets a client leave
    /// it out there; the MCP authorization specification does not).
    @Test func registeredAsANativeAppAndTheResourceNamedAtEveryTokenRequest() async throws {
        let setting = try await Setting([])
        let configuration = try await setting.providers.configuration(for: setting.url("/api/me")).configuration
        let file = try ProviderCatalog.readFile(setting.catalog.userFile(for: configuration.id))
        let token = try #require(try setting.local.secrets.load(for: ZeroConfiguration.registrationKey(configuration.id)))
        let registration = try await HTTPClient().get(
            try #require(file.registrationClientURI.value), headers: ["Authorization": "Bearer \(token)"]
        ).json
        #expect(registration["application_type"] as? String == "native")
        #expect((registration["grant_types"] as? [String])?.contains("refresh_token") == true)

        let session = AuthSession(configuration: configuration, store: MemoryTokenStore(), now: { Date().addingTimeInterval(7200) })
        let first = try await session.signIn(using: FormPostingUserAgent()).token
        let renewed = try await session.freshToken()
        #expect(renewed.accessToken != first.accessToken && renewed.refreshToken != nil)
        #expect(try await setting.statistics()["refresh_grants"] as? Int == 1)
        let named = try await setting.statistics()["token_request_resources"] as? [String]
        #expect(named == [setting.sandbox.baseURL + "/api/me", setting.sandbox.baseURL + "/api/me"], "\(String(describing: named))")
    }
}
