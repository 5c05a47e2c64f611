import Foundation
import TestSupport
import Testing

@Suite struct RefreshRevocationUserinfoTests {
    let sandbox: RunningSandbox
    let browser: Browser

    init() async throws {
        sandbox = try await RunningSandbox.start()
        browser = Browser(sandbox: sandbox)
    }

    func revoke(_ token: String, hint: String? = nil, client: String = Clients.publicID) async throws -> Reply {
        var fields = [("token", token), ("client_id", client)]
        if let hint { fields.append(("token_type_hint", hint)) }
        return try await browser.http.postForm("\(sandbox.baseURL)/revoke", fields)
    }

    @Test func refreshRotatesAndARotatedOutTokenIsInvalidGrant() async throws {
        let first = try await browser.tokens().json
        let oldRefresh = try #require(first["refresh_token"] as? String)
        let refreshed = try await browser.refresh(oldRefresh)
        #expect(refreshed.status == 200)
        #expect(refreshed.header("cache-control") == "no-store")
        let newRefresh = try #require(refreshed.json["refresh_token"] as? String)
        let newAccess = try #require(refreshed.json["access_token"] as? String)
        #expect(newRefresh != oldRefresh)
        #expect(newAccess != first["access_token"] as? String)
        #expect(try await browser.userinfo(newAccess).status == 200)

        let replay = try await browser.refresh(oldRefresh)
        #expect(replay.status == 400)
        #expect(replay.error == "invalid_grant")
        // Replaying a rotated-out token is theft as far as the server can tell: the grant dies.
        #expect(try await browser.refresh(newRefresh).error == "invalid_grant")
    }

    @Test func refreshByAnotherClientIsInvalidGrant() async throws {
        let refresh = try #require(try await browser.tokens().json["refresh_token"] as? String)
        let reply = try await browser.http.postForm(
            "\(sandbox.baseURL)/token",
            [("grant_type", "refresh_token"), ("refresh_token", refresh)],
            headers: ["Authorization": HTTPClient.basic(Clients.confidentialID, Clients.secret)])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
    }

    @Test func refreshMayNarrowButNotWidenTheScope() async throws {
        let refresh = try #require(try await browser.tokens(scope: "openid profile").json["refresh_token"] as? String)
        let wider = try await browser.http.postForm(
            "\(sandbox.baseURL)/token",
            [("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", Clients.publicID), ("scope", "openid email")])
        #expect(wider.status == 400)
        #expect(wider.error == "invalid_scope")
    }

    @Test func missingRefreshTokenIsInvalidRequest() async throws {
        let reply = try await browser.http.postForm(
            "\(sandbox.baseURL)/token", [("grant_type", "refresh_token"), ("client_id", Clients.publicID)])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_request")
    }

    @Test func revokingTheRefreshTokenEndsTheWholeGrant() async throws {
        let tokens = try await browser.tokens().json
        let access = try #require(tokens["access_token"] as? String)
        let refresh = try #require(tokens["refresh_token"] as? String)
        let reply = try await revoke(refresh, hint: "refresh_token")
        #expect(reply.status == 200)
        #expect(try await browser.refresh(refresh).error == "invalid_grant")
        let userinfo = try await browser.userinfo(access)
        #expect(userinfo.status == 401)
        #expect(userinfo.header("www-authenticate")?.contains(#"error="invalid_token""#) == true)
    }

    @Test func revokingTheAccessTokenEndsThatTokenOnly() async throws {
        let tokens = try await browser.tokens().json
        let access = try #require(tokens["access_token"] as? String)
        let refresh = try #require(tokens["refresh_token"] as? String)
        #expect(try await revoke(access, hint: "access_token").status == 200)
        #expect(try await browser.userinfo(access).status == 401)
        #expect(try await browser.refresh(refresh).status == 200)
    }

    @Test func revokingAnUnknownTokenIsStill200() async throws {
        #expect(try await revoke("never-issued").status == 200)
    }

    @Test func revokingAnotherClientsTokenIsRefused() async throws {
        let refresh = try #require(try await browser.tokens().json["refresh_token"] as? String)
        let reply = try await browser.http.postForm(
            "\(sandbox.baseURL)/revoke", [("token", refresh)],
            headers: ["Authorization": HTTPClient.basic(Clients.confidentialID, Clients.secret)])
        #expect(reply.status == 400)
        #expect(reply.error == "unauthorized_client")
        #expect(try await browser.refresh(refresh).status == 200, "the token still works")
    }

    @Test func unknownTokenTypeHintIsUnsupportedTokenType() async throws {
        let reply = try await revoke("x", hint: "id_token")
        #expect(reply.status == 400)
        #expect(reply.error == "unsupported_token_type")
    }

    @Test func revocationWithoutClientIsInvalidClient() async throws {
        let reply = try await browser.http.postForm("\(sandbox.baseURL)/revoke", [("token", "x")])
        #expect(reply.status == 401)
        #expect(reply.error == "invalid_client")
    }

    @Test func userinfoGivesTheClaimsOfTheGrantedScopes() async throws {
        let access = try #require(try await browser.tokens().json["access_token"] as? String)
        let reply = try await browser.userinfo(access)
        #expect(reply.status == 200)
        #expect(reply.header("cache-control") == "no-store")
        let claims = reply.json
        #expect((claims["sub"] as? String)?.isEmpty == false)
        #expect(claims["name"] as? String == "Ada Lovelace")
        #expect(claims["email"] as? String == "ada@sandbox.example")
        #expect(claims["email_verified"] as? Bool == true)
        #expect(claims["picture"] as? String == "\(sandbox.baseURL)/avatar/ada.svg")
        #expect(claims["profile"] as? String == "\(sandbox.baseURL)/in/ada")

        let narrow = try #require(try await browser.tokens(scope: "openid email").json["access_token"] as? String)
        let narrowClaims = try await browser.userinfo(narrow).json
        #expect(narrowClaims["email"] as? String == "ada@sandbox.example")
        #expect(narrowClaims["name"] == nil)
        #expect(narrowClaims["profile"] == nil)
    }

    @Test func userinfoWithoutTokenIs401WithABareBearerChallenge() async throws {
        let reply = try await browser.http.get("\(sandbox.baseURL)/userinfo")
        #expect(reply.status == 401)
        let challenge = try #require(reply.header("www-authenticate"))
        #expect(challenge.hasPrefix("Bearer"))
        #expect(!challenge.contains("error="))
    }

    @Test func userinfoWithAnUnknownTokenIsInvalidToken() async throws {
        let reply = try await browser.userinfo("sbx_at_forged")
        #expect(reply.status == 401)
        #expect(reply.header("www-authenticate")?.contains(#"error="invalid_token""#) == true)
    }

    @Test func userinfoWithoutOpenIDScopeIsInsufficientScope() async throws {
        let access = try #require(try await browser.tokens(scope: "profile").json["access_token"] as? String)
        let reply = try await browser.userinfo(access)
        #expect(reply.status == 403)
        #expect(reply.header("www-authenticate")?.contains(#"error="insufficient_scope""#) == true)
    }
}

@Suite struct LifetimeAndConfigurationTests {
    @Test func expiredAccessTokenIsInvalidTokenAndRefreshRevivesIt() async throws {
        let sandbox = try await RunningSandbox.start(["--access-token-ttl", "1"])
        let browser = Browser(sandbox: sandbox)
        let tokens = try await browser.tokens().json
        #expect(tokens["expires_in"] as? Int == 1)
        let access = try #require(tokens["access_token"] as? String)
        try await Task.sleep(for: .milliseconds(1300))
        let expired = try await browser.userinfo(access)
        #expect(expired.status == 401)
        #expect(expired.header("www-authenticate")?.contains(#"error="invalid_token""#) == true)
        // The refreshed token lives 1 s too. On a busy machine the request
        // that uses it may arrive later than that, so an attempt only counts
        // when it finished inside the lifetime; a 401 inside it is a failure.
        var refreshToken = try #require(tokens["refresh_token"] as? String)
        var accepted = false
        for _ in 0..<5 where !accepted {
            let start = ContinuousClock.now
            let refreshed = try await browser.refresh(refreshToken)
            #expect(refreshed.status == 200)
            refreshToken = try #require(refreshed.json["refresh_token"] as? String)
            let fresh = try #require(refreshed.json["access_token"] as? String)
            let status = try await browser.userinfo(fresh).status
            let inTime = ContinuousClock.now - start < .milliseconds(900)
            if status == 200 {
                accepted = true
            } else if inTime {
                Issue.record("a refreshed token was refused \(status) within its lifetime")
                return
            }
        }
        #expect(accepted, "no refreshed token was accepted in five tries")
    }

    @Test func usersAndClientsComeFromAFileAndCodesExpire() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(
            """
            {
              "users": [{"username": "lin", "password": "pw", "name": "Lin Example", "email": "lin@example.org"}],
              "clients": [{"client_id": "tool", "name": "A Tool", "redirect_uris": ["https://app.example/cb?tenant=a"]}],
              "code_ttl": 1
            }
            """.utf8
        ).write(to: file)
        let sandbox = try await RunningSandbox.start(["--config", file.path])
        let browser = Browser(sandbox: sandbox)
        let pkce = PKCE()
        let parameters = Browser.parameters(client: "tool", redirectURI: "https://app.example/cb?tenant=a", pkce: pkce)
        #expect(try await browser.submit(parameters, username: "ada", password: "engine").status == 401, "built-in users are gone")
        let reply = try await browser.submit(parameters, username: "lin", password: "pw")
        #expect(reply.status == 302)
        #expect(reply.header("location")?.hasPrefix("https://app.example/cb?tenant=a&code=") == true)
        let code = try #require(reply.redirectParameters["code"])
        try await Task.sleep(for: .milliseconds(1200))
        let late = try await browser.http.postForm(
            "\(sandbox.baseURL)/token",
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://app.example/cb?tenant=a"),
                ("client_id", "tool"), ("code_verifier", pkce.verifier),
            ])
        #expect(late.status == 400)
        #expect(late.error == "invalid_grant")
    }

    @Test func grantsSurviveARestartWithAStateFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-state-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        var tokens: [String: Any] = [:]
        do {
            let first = try await RunningSandbox.start(["--state-file", file.path])
            tokens = try await Browser(sandbox: first).tokens().json
        }
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600, "the state file holds tokens")
        let second = try await RunningSandbox.start(["--state-file", file.path])
        let browser = Browser(sandbox: second)
        #expect(try await browser.userinfo(try #require(tokens["access_token"] as? String)).status == 200)
        let refreshed = try await browser.refresh(try #require(tokens["refresh_token"] as? String))
        #expect(refreshed.status == 200)
    }

    @Test func theStateFileKeepsOnlyWhatCanStillBeUsed() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-state-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let sandbox = try await RunningSandbox.start(["--state-file", file.path])
        let browser = Browser(sandbox: sandbox)
        let revoked = try #require(try await browser.tokens().json["refresh_token"] as? String)
        _ = try await browser.http.postForm(
            "\(sandbox.baseURL)/revoke", [("token", revoked), ("client_id", Clients.publicID)])
        let kept = try #require(try await browser.tokens().json["refresh_token"] as? String)
        let saved = try String(contentsOf: file, encoding: .utf8)
        #expect(!saved.contains(revoked), "a revoked grant is not written")
        #expect(saved.contains(kept))
    }

    @Test func exitsWhenItsParentGoesAway() async throws {
        let sandbox = try await RunningSandbox.start(["--exit-with-stdin"])
        #expect(sandbox.process.isRunning)
        try sandbox.input.fileHandleForWriting.close()
        #expect(await sandbox.process.exit(timeout: 5) == 0)
    }

    @Test func aBrokenConfigurationFileStopsStartWithAReason() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"users": [], "clients": [{"client_id": "x", "name": "X", "redirect_uris": []}]}"#.utf8).write(to: file)
        let error = await #expect(throws: SandboxTestError.self) { try await RunningSandbox.start(["--config", file.path]) }
        #expect(error?.description.contains("Client x has no redirect URI.") == true)
    }
}
