import Crypto
import Foundation
import TestSupport
import Testing

/// `latchkey-sandbox --behave-like …`: each imitated provider's documented quirks,
/// checked over plain HTTP with curl.
struct Imitation {
    let sandbox: RunningSandbox
    let http = HTTPClient()
    let authorizePath: String
    let tokenPath: String

    init(_ provider: String, authorize: String, token: String) async throws {
        sandbox = try await RunningSandbox.start(["--behave-like", provider])
        authorizePath = authorize
        tokenPath = token
    }

    var base: String { sandbox.baseURL }

    func authorizeURL(_ parameters: [(String, String)]) -> String {
        "\(base)\(authorizePath)?\(HTTPClient.form(parameters))"
    }

    static func parameters(
        client: String, redirectURI: String = Clients.https, scope: String, state: String = "s-1", pkce: PKCE? = nil,
        nonce: String? = nil, extra: [(String, String)] = []
    ) -> [(String, String)] {
        var parameters = [
            ("response_type", "code"), ("client_id", client), ("redirect_uri", redirectURI), ("scope", scope), ("state", state),
        ]
        if let pkce { parameters += [("code_challenge", pkce.challenge), ("code_challenge_method", "S256")] }
        if let nonce { parameters.append(("nonce", nonce)) }
        return parameters + extra
    }

    /// Opens the page and answers its form; the sandbox's answer (a redirect, or a page).
    func submit(_ parameters: [(String, String)], action: String = "allow") async throws -> Reply {
        try await SandboxPages.answer(authorizeURL(parameters), action: action, http: http)
    }

    func code(_ parameters: [(String, String)]) async throws -> String {
        let reply = try await submit(parameters)
        guard reply.status == 302, let code = reply.redirectParameters["code"] else {
            throw SandboxTestError("No code: HTTP \(reply.status) \(reply.header("location") ?? reply.text.prefix(300).description)")
        }
        return code
    }

    func exchange(_ fields: [(String, String)], headers: [String: String] = ["Accept": "application/json"]) async throws -> Reply {
        try await http.postForm("\(base)\(tokenPath)", fields, headers: headers)
    }

    /// The ID token's claims, read without checking (the signature is tested elsewhere).
    static func claims(_ idToken: String?) -> [String: Any] {
        guard let part = idToken?.split(separator: ".").dropFirst().first else { return [:] }
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}

@Suite struct BehaveLikeLinkedInTests {
    let li: Imitation

    init() async throws {
        li = try await Imitation("linkedin", authorize: "/oauth/v2/authorization", token: "/oauth/v2/accessToken")
    }

    func exchange(_ code: String, extra: [(String, String)] = [("client_secret", Clients.secret)]) async throws -> Reply {
        try await li.exchange(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https),
                ("client_id", Clients.confidentialID),
            ] + extra)
    }

    @Test func itsIDTokenHasNoNonceAndItsScopeIsCommaSeparated() async throws {
        let code = try await li.code(
            Imitation.parameters(client: Clients.confidentialID, scope: "openid profile email", nonce: "n-0S6_WzA2Mj"))
        let reply = try await exchange(code)
        #expect(reply.status == 200)
        #expect(reply.json["scope"] as? String == "openid,profile,email")
        #expect(reply.json["expires_in"] as? Int == 5_184_000)
        #expect(reply.json["refresh_token"] == nil)
        let claims = Imitation.claims(reply.json["id_token"] as? String)
        #expect(claims["nonce"] == nil, "the nonce that was sent is not echoed")
        #expect(claims["iss"] as? String == "\(li.base)/oauth")
        #expect(claims["email_verified"] as? String == "true")
    }

    @Test func discoveryLivesUnderOAuthAndListsNoNonce() async throws {
        let document = try await li.http.get("\(li.base)/oauth/.well-known/openid-configuration").json
        #expect(document["issuer"] as? String == "\(li.base)/oauth")
        #expect((document["claims_supported"] as? [String])?.contains("nonce") == false)
        #expect(document["token_endpoint_auth_methods_supported"] as? [String] == ["client_secret_post"])
        #expect(try await li.http.get("\(li.base)/.well-known/openid-configuration").status == 404)
    }

    @Test func theSignInPageSaysWhatItImitatesAndPostsToItsOwnPath() async throws {
        let page = try await li.http.get(li.authorizeURL(Imitation.parameters(client: Clients.confidentialID, scope: "openid")))
        #expect(page.text.contains("behaving like LinkedIn"))
        #expect(SandboxPages.formAction(in: page.text) == "/oauth/v2/authorization")
    }

    @Test func aStandardAppThatSendsPKCEFailsClientAuthenticationAtTheTokenEndpoint() async throws {
        let pkce = PKCE()
        let code = try await li.code(Imitation.parameters(client: Clients.confidentialID, scope: "openid", pkce: pkce))
        let reply = try await exchange(code, extra: [("client_secret", Clients.secret), ("code_verifier", pkce.verifier)])
        #expect(reply.status == 401)
        #expect(reply.error == "invalid_client")
    }

    @Test func theSecretIsTakenFromTheBodyOnly() async throws {
        let code = try await li.code(Imitation.parameters(client: Clients.confidentialID, scope: "openid"))
        let basic = "Basic " + Data("\(Clients.confidentialID):\(Clients.secret)".utf8).base64EncodedString()
        let reply = try await li.exchange(
            [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https)],
            headers: ["Authorization": basic])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_request")
    }

    @Test func denyIsUserCancelledAuthorize() async throws {
        let reply = try await li.submit(Imitation.parameters(client: Clients.confidentialID, scope: "openid"), action: "deny")
        #expect(reply.redirectParameters["error"] == "user_cancelled_authorize")
        #expect(reply.redirectParameters["iss"] == nil, "LinkedIn sends no RFC 9207 iss")
    }

    @Test func denyBeforeSigningInIsUserCancelledLogin() async throws {
        let reply = try await SandboxPages.answer(
            li.authorizeURL(Imitation.parameters(client: Clients.confidentialID, scope: "openid")), action: "deny",
            username: "", password: "", http: li.http)
        #expect(reply.redirectParameters["error"] == "user_cancelled_login")
    }

    @Test func userinfoHasALocaleObjectAndMeIsForbidden() async throws {
        let code = try await li.code(Imitation.parameters(client: Clients.confidentialID, scope: "openid profile email"))
        let token = try #require(try await exchange(code).json["access_token"] as? String)
        let userinfo = try await li.http.get("\(li.base)/v2/userinfo", headers: ["Authorization": "Bearer \(token)"])
        #expect(userinfo.status == 200)
        #expect(userinfo.json["locale"] is [String: Any])
        #expect(userinfo.json["email_verified"] as? Bool == true)
        #expect(userinfo.json["profile"] == nil, "no profile link")
        let me = try await li.http.get("\(li.base)/v2/me", headers: ["Authorization": "Bearer \(token)"])
        #expect(me.status == 403)
        #expect(me.json["code"] as? String == "ACCESS_DENIED")
    }

    @Test func aClientWithoutASecretCannotSignIn() async throws {
        let page = try await li.http.get(
            li.authorizeURL(Imitation.parameters(client: Clients.publicID, scope: "openid", pkce: PKCE())))
        #expect(page.status == 400)
        #expect(page.header("location") == nil, "an error page, never a redirect")
    }
}

@Suite struct BehaveLikeGitHubTests {
    let gh: Imitation

    init() async throws {
        gh = try await Imitation("github", authorize: "/login/oauth/authorize", token: "/login/oauth/access_token")
    }

    func code() async throws -> String {
        try await gh.code(
            Imitation.parameters(client: Clients.confidentialID, redirectURI: Clients.loopback, scope: "read:user user:email"))
    }

    func fields(_ code: String) -> [(String, String)] {
        [
            ("code", code), ("redirect_uri", Clients.loopback), ("client_id", Clients.confidentialID),
            ("client_secret", Clients.secret),
        ]
    }

    @Test func theAnswerIsAFormUnlessJSONIsAccepted() async throws {
        let form = try await gh.exchange(fields(try await code()), headers: [:])
        #expect(form.status == 200)
        #expect(form.header("content-type")?.hasPrefix("application/x-www-form-urlencoded") == true)
        let pairs = Dictionary(
            (URLComponents(string: "?" + form.text)?.queryItems ?? []).map { ($0.name, $0.value ?? "") },
            uniquingKeysWith: { a, _ in a })
        #expect(pairs["token_type"] == "bearer")
        #expect(pairs["scope"] == "read:user,user:email")
        #expect(pairs["access_token"]?.isEmpty == false)
        #expect(pairs["expires_in"] == nil && pairs["refresh_token"] == nil)

        let json = try await gh.exchange(fields(try await code()))
        #expect(json.header("content-type") == "application/json")
        #expect(json.json["scope"] as? String == "read:user,user:email")
    }

    @Test func aBadCodeIsAnErrorWithStatus200() async throws {
        let reply = try await gh.exchange(fields("not-a-code"))
        #expect(reply.status == 200)
        #expect(reply.error == "bad_verification_code")
        let wrongSecret = try await gh.exchange(
            [
                ("code", try await code()), ("redirect_uri", Clients.loopback), ("client_id", Clients.confidentialID),
                ("client_secret", "wrong"),
            ])
        #expect(wrongSecret.status == 200)
        #expect(wrongSecret.error == "incorrect_client_credentials")
    }

    @Test func theAPIRefusesARequestWithoutUserAgentAndNamesMayBeNull() async throws {
        let tokenFor = { (username: String, password: String) async throws -> String in
            let reply = try await SandboxPages.answer(
                gh.authorizeURL(Imitation.parameters(client: Clients.confidentialID, redirectURI: Clients.loopback, scope: "read:user")),
                username: username, password: password, http: gh.http)
            let code = try #require(reply.redirectParameters["code"])
            return try #require(try await gh.exchange(fields(code)).json["access_token"] as? String)
        }
        let ada = try await tokenFor("ada", "engine")
        // curl sends its own User-Agent unless told to send an empty one.
        let bare = try await gh.http.get("\(gh.base)/user", headers: ["Authorization": "Bearer \(ada)", "User-Agent": ""])
        #expect(bare.status == 403)
        #expect(bare.text.contains("User-Agent"))
        let user = try await gh.http.get("\(gh.base)/user", headers: ["Authorization": "Bearer \(ada)"])
        #expect(user.json["login"] as? String == "ada")
        #expect(user.json["html_url"] as? String == "\(gh.base)/ada")
        let grace = try await gh.http.get(
            "\(gh.base)/user", headers: ["Authorization": "Bearer \(try await tokenFor("grace", "compiler"))"])
        #expect(grace.json["name"] is NSNull)
        #expect(grace.json["email"] is NSNull)
        #expect(try await gh.http.get("\(gh.base)/ada").status == 200, "the profile page")
    }

    @Test func pkceIsOptionalAndChecked() async throws {
        let pkce = PKCE()
        let code = try await gh.code(
            Imitation.parameters(client: Clients.confidentialID, redirectURI: Clients.loopback, scope: "read:user", pkce: pkce))
        let wrong = try await gh.exchange(fields(code) + [("code_verifier", PKCE().verifier)])
        #expect(wrong.status == 200 && wrong.error == "bad_verification_code")
    }
}

@Suite struct BehaveLikeMicrosoftTests {
    let ms: Imitation

    init() async throws {
        ms = try await Imitation("microsoft", authorize: "/common/oauth2/v2.0/authorize", token: "/common/oauth2/v2.0/token")
    }

    func tokens(scope: String) async throws -> Reply {
        let pkce = PKCE()
        let code = try await ms.code(
            Imitation.parameters(client: Clients.publicID, redirectURI: Clients.loopback, scope: scope, pkce: pkce, nonce: "n-1"))
        return try await ms.exchange(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.loopback),
                ("client_id", Clients.publicID), ("code_verifier", pkce.verifier),
            ])
    }

    @Test func theIDTokenNamesTheUsersTenantAndTheDiscoveryDocumentAPlaceholder() async throws {
        let reply = try await tokens(scope: "openid profile email offline_access")
        let claims = Imitation.claims(reply.json["id_token"] as? String)
        let tenant = try #require(claims["tid"] as? String)
        #expect(claims["iss"] as? String == "\(ms.base)/\(tenant)/v2.0")
        #expect(claims["nonce"] as? String == "n-1")
        #expect(reply.json["ext_expires_in"] as? Int == 3599)
        #expect(reply.json["refresh_token"] is String)
        let document = try await ms.http.get("\(ms.base)/common/v2.0/.well-known/openid-configuration").json
        #expect(document["issuer"] as? String == "\(ms.base)/{tenantid}/v2.0")
    }

    @Test func noRefreshTokenWithoutOfflineAccess() async throws {
        #expect(try await tokens(scope: "openid profile").json["refresh_token"] == nil)
    }

    @Test func aPublicClientMustNotSendASecret() async throws {
        let pkce = PKCE()
        let code = try await ms.code(
            Imitation.parameters(client: Clients.publicID, redirectURI: Clients.loopback, scope: "openid", pkce: pkce))
        let reply = try await ms.exchange(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.loopback),
                ("client_id", Clients.publicID), ("client_secret", "anything"), ("code_verifier", pkce.verifier),
            ])
        #expect(reply.status == 401)
        #expect(reply.error == "invalid_client")
    }
}

@Suite struct BehaveLikeGitLabTests {
    @Test func tokensLiveTwoHoursCarryCreatedAtAndTheProfileHasAWebURL() async throws {
        let gl = try await Imitation("gitlab", authorize: "/oauth/authorize", token: "/oauth/token")
        let pkce = PKCE()
        let code = try await gl.code(
            Imitation.parameters(client: Clients.publicID, redirectURI: Clients.privateUse, scope: "openid read_user", pkce: pkce))
        let reply = try await gl.exchange(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.privateUse),
                ("client_id", Clients.publicID), ("code_verifier", pkce.verifier),
            ])
        #expect(reply.json["expires_in"] as? Int == 7200)
        #expect(reply.json["created_at"] is Int)
        #expect(Imitation.claims(reply.json["id_token"] as? String)["iss"] as? String == gl.base)
        let token = try #require(reply.json["access_token"] as? String)
        let user = try await gl.http.get("\(gl.base)/api/v4/user", headers: ["Authorization": "Bearer \(token)"])
        #expect(user.json["web_url"] as? String == "\(gl.base)/ada")
        #expect(user.json["username"] as? String == "ada")
    }
}

@Suite struct BehaveLikeGoogleTests {
    let google: Imitation

    init() async throws {
        google = try await Imitation("google", authorize: "/o/oauth2/v2/auth", token: "/token")
    }

    @Test func onlyALoopbackRedirectIsAccepted() async throws {
        for redirect in [Clients.https, Clients.privateUse] {
            let page = try await google.http.get(
                google.authorizeURL(
                    Imitation.parameters(client: Clients.confidentialID, redirectURI: redirect, scope: "openid", pkce: PKCE())))
            #expect(page.status == 400, "\(redirect)")
            #expect(page.header("location") == nil)
        }
    }

    @Test func aRefreshTokenOnlyWithAccessTypeOffline() async throws {
        for offline in [false, true] {
            let pkce = PKCE()
            let code = try await google.code(
                Imitation.parameters(
                    client: Clients.confidentialID, redirectURI: "http://127.0.0.1:61234/callback", scope: "openid email",
                    pkce: pkce, extra: offline ? [("access_type", "offline")] : []))
            let reply = try await google.exchange(
                [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "http://127.0.0.1:61234/callback"),
                    ("client_id", Clients.confidentialID), ("client_secret", Clients.secret), ("code_verifier", pkce.verifier),
                ])
            #expect(reply.status == 200)
            #expect((reply.json["refresh_token"] != nil) == offline, "offline: \(offline)")
        }
    }

    @Test func aClientWithoutItsSecretIsRefused() async throws {
        let page = try await google.http.get(
            google.authorizeURL(
                Imitation.parameters(client: Clients.publicID, redirectURI: Clients.loopback, scope: "openid", pkce: PKCE())))
        #expect(page.status == 400)
    }
}

@Suite struct BehaveLikeOptionTests {
    @Test func anUnknownProviderIsRefusedWithTheList() async throws {
        let error = await #expect(throws: SandboxTestError.self) { try await RunningSandbox.start(["--behave-like", "myspace"]) }
        #expect(error?.description.contains("linkedin, github") == true)
    }
}
