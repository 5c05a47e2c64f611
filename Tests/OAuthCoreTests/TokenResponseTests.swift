import Foundation
import Testing

@testable import OAuthCore

@Suite struct TokenResponseTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func read(_ status: Int, _ body: String, type: String? = "application/json") throws -> Token {
        var headers: [String: String] = [:]
        if let type { headers["Content-Type"] = type }
        return try TokenResponse.token(from: HTTPResponse(status: status, headers: headers, body: Data(body.utf8)), secrets: [], now: now)
    }

    func error(_ status: Int, _ body: String, type: String? = "application/json") -> OAuthError? {
        #expect(throws: OAuthError.self) { try read(status, body, type: type) }
    }

    @Test func jsonAnswerBecomesATokenWithAnAbsoluteExpiry() throws {
        let token = try read(
            200, #"{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","scope":"openid","id_token":"a.b.c"}"#)
        #expect(token.accessToken == "at")
        #expect(token.refreshToken == "rt")
        #expect(token.scope == "openid")
        #expect(token.idToken == "a.b.c")
        #expect(token.expiresAt == now.addingTimeInterval(3600))
        #expect(token.receivedAt == now)
    }

    /// A token goes to terminals, headers and git's line protocol: one with an escape, a line break, a
    /// space or non-ASCII in it (or such a scope) is refused with a sentence, whole.
    @Test(arguments: [
        #"{"access_token":"at\u001b[31mred","token_type":"Bearer"}"#,
        #"{"access_token":"at\r\npassword=x","token_type":"Bearer"}"#,
        #"{"access_token":"two words","token_type":"Bearer"}"#,
        #"{"access_token":"caf\u00e9","token_type":"Bearer"}"#,
        #"{"access_token":"at","token_type":"Bearer","scope":"openid \u001b]0;title\u0007"}"#,
        #"{"access_token":"at","token_type":"Bearer","scope":"openid pro\"file"}"#,
    ])
    func aTokenOrScopeThatIsNotVisibleASCIIIsRefused(body: String) throws {
        guard case .malformedResponse(.token, let reason)? = error(200, body) else { return #expect(Bool(false), "taken: \(body)") }
        #expect(reason.contains("access token holds") || reason.contains("scopes hold"), "\(reason)")
        #expect(!OAuthError.malformedResponse(endpoint: .token, reason: reason).description.contains("\u{1B}"))
    }

    @Test func tokensOfTheProvidersWeKnowAreVisibleASCII() throws {
        for token in ["gho_16C7e42F292c6912E7710c838347Ae178B4a", "ya29.a0AfH6SMB-x_y~z", "eyJhbGciOi.eyJzdWIi.c2ln-_", "abc+/def=="] {
            #expect(try read(200, #"{"access_token":"\#(token)","token_type":"Bearer"}"#).accessToken == token)
        }
    }

    @Test func githubsFormEncodedAnswerIsReadToo() throws {
        let token = try read(
            200, "access_token=gho_16C7e42F292c6912E7710c838347Ae178B4a&scope=repo%2Cgist&token_type=bearer",
            type: "application/x-www-form-urlencoded; charset=utf-8")
        #expect(token.accessToken == "gho_16C7e42F292c6912E7710c838347Ae178B4a")
        #expect(token.scope == "repo gist", "GitHub's comma-separated scope, kept as RFC 6749 has it")
        #expect(token.tokenType == "Bearer")
        #expect(token.expiresAt == nil, "no expires_in: valid until refused")
    }

    @Test(arguments: [
        (#""openid profile email""#, "openid profile email"),
        (#""email,openid,profile""#, "email openid profile"),
        (#""read:user, user:email""#, "read:user user:email"),
        (#"["openid", "email"]"#, "openid email"),
        (#""""#, nil),
        ("42", nil),
    ])
    func grantedScopesAreReadWhicheverWayTheyAreSeparated(json: String, scope: String?) throws {
        #expect(try read(200, #"{"access_token":"at","token_type":"Bearer","scope":\#(json)}"#).scope == scope)
    }

    @Test func aProvidersOwnErrorNameMeansWhatItsAliasSays() throws {
        let response = HTTPResponse(
            status: 200, headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data("error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired.".utf8))
        let aliased = #expect(throws: OAuthError.self) {
            try TokenResponse.token(
                from: response, secrets: [], errorAliases: ["bad_verification_code": "invalid_grant"], now: now)
        }
        #expect(aliased == .invalidGrant(description: "The code passed is incorrect or expired."))
        let plain = #expect(throws: OAuthError.self) { try TokenResponse.token(from: response, secrets: [], now: now) }
        #expect(plain == .tokenEndpoint(code: "bad_verification_code", description: "The code passed is incorrect or expired."))
    }

    @Test func aProvidersDescriptionEndsOurSentenceWithOneFullStop() {
        // The sandbox, like many providers, ends its descriptions with a full stop.
        #expect(
            "\(OAuthError.invalidClient(description: "Client authentication failed."))"
                == "The provider did not accept this app's client credentials: Client authentication failed. Check the client id and secret."
        )
        #expect(
            "\(OAuthError.invalidGrant(description: "The refresh token was revoked."))"
                == "The provider no longer accepts this sign-in: The refresh token was revoked. Sign in again.")
        #expect("\(OAuthError.invalidGrant(description: nil))" == "The provider no longer accepts this sign-in. Sign in again.")
    }

    /// A reason that begins with a URL or a path keeps it as written when it becomes a sentence of its own.
    @Test func aReasonBecomesASentenceWithoutCapitalisingAURL() {
        #expect(OAuthError.sentence("the field \"id\" is missing.") == "The field \"id\" is missing.")
        #expect(
            OAuthError.sentence("http://127.0.0.1:8765/nope has no discovery document.")
                == "http://127.0.0.1:8765/nope has no discovery document.")
        #expect(OAuthError.sentence("/home/ada/x.json is not a JSON object.") == "/home/ada/x.json is not a JSON object.")
        #expect(OAuthError.sentence("~/.config/latchkey/x.json is not a JSON object.") == "~/.config/latchkey/x.json is not a JSON object.")
        #expect(OAuthError.sentence("“idp” is not an issuer URL.") == "“idp” is not an issuer URL.")
    }

    @Test func aLifetimeOfOneSecondIsALifetimeAndTrueIsNone() throws {
        #expect(try read(200, #"{"access_token":"at","token_type":"Bearer","expires_in":1}"#).expiresAt == now.addingTimeInterval(1))
        #expect(try read(200, #"{"access_token":"at","token_type":"Bearer","expires_in":true}"#).expiresAt == nil)
    }

    @Test(arguments: ["1e300", #""1e999""#, "1.7976931348623157e308", "9223372036854775807"])
    func aHugeLifetimeIsClampedNotATrap(expiresIn: String) throws {
        let token = try read(200, #"{"access_token":"at","token_type":"Bearer","expires_in":\#(expiresIn)}"#)
        #expect(token.expiresAt == now.addingTimeInterval(TokenResponse.longestLifetime))
        #expect(token.description.contains("expires in"), "describing it (the default log level does) does not trap")
    }

    @Test(arguments: ["0", "-60", #""NaN""#, #""-1e999""#, "null"])
    func aLifetimeThatIsNoLifetimeStatesNone(expiresIn: String) throws {
        #expect(try read(200, #"{"access_token":"at","token_type":"Bearer","expires_in":\#(expiresIn)}"#).expiresAt == nil)
    }

    @Test func aStoredTokenWithAnyDateDescribesItself() throws {
        for seconds in [1e300, -1e300, 0] {
            let token = Token(accessToken: "at", expiresAt: Date(timeIntervalSince1970: seconds))
            #expect(token.description.contains("expires in"))
        }
    }

    @Test func expiresInAsAStringIsUnderstood() throws {
        #expect(try read(200, #"{"access_token":"at","expires_in":"60"}"#).expiresAt == now.addingTimeInterval(60))
    }

    /// LinkedIn's Authorization Code Flow page shows an answer without `token_type`
    /// (its OpenID Connect page shows one with it): either is understood.
    @Test func missingTokenTypeIsBearer() throws {
        #expect(try read(200, #"{"access_token":"at","expires_in":5184000}"#).tokenType == "Bearer")
    }

    @Test func aTokenTypeOtherThanBearerIsRefused() {
        guard case .malformedResponse(_, let reason)? = error(200, #"{"access_token":"at","token_type":"mac"}"#) else {
            Issue.record("expected malformedResponse")
            return
        }
        #expect(reason.contains("mac"))
    }

    @Test(arguments: [
        ("invalid_grant", OAuthError.invalidGrant(description: "Code expired")),
        ("invalid_client", OAuthError.invalidClient(description: "Code expired")),
        ("invalid_request", OAuthError.tokenEndpoint(code: "invalid_request", description: "Code expired")),
        ("unauthorized_client", OAuthError.tokenEndpoint(code: "unauthorized_client", description: "Code expired")),
        ("unsupported_grant_type", OAuthError.tokenEndpoint(code: "unsupported_grant_type", description: "Code expired")),
        ("invalid_scope", OAuthError.tokenEndpoint(code: "invalid_scope", description: "Code expired")),
    ])
    func eachRFC6749ErrorBodyBecomesItsTypedError(code: String, expected: OAuthError) {
        #expect(error(400, #"{"error":"\#(code)","error_description":"Code expired"}"#) == expected)
    }

    @Test func githubsErrorWith200IsStillAnError() {
        let found = error(
            200, "error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired.",
            type: "application/x-www-form-urlencoded")
        #expect(found == .tokenEndpoint(code: "bad_verification_code", description: "The code passed is incorrect or expired."))
    }

    @Test func aSecretEchoedInAnErrorDescriptionIsRedacted() throws {
        let response = HTTPResponse(
            status: 400, headers: ["Content-Type": "application/json"],
            body: Data(#"{"error":"invalid_grant","error_description":"code abcdefgh12345 is spent"}"#.utf8))
        let found = #expect(throws: OAuthError.self) { try TokenResponse.token(from: response, secrets: ["abcdefgh12345"], now: now) }
        #expect(found == .invalidGrant(description: "code ‹redacted› is spent"))
    }

    /// Found by the token-response fuzzer: a secret glued onto an error code (or a
    /// token type) is one word, so no placeholder can stand in for it there.
    @Test(arguments: [
        (400, #"{"error":"invalid_clientSequenabcdefgh12345"}"#),
        (200, #"{"access_token":"at","token_type":"abcdefgh12345mac"}"#),
    ])
    func aSecretGluedIntoAnErrorCodeOrTokenTypeIsNeverShown(status: Int, body: String) throws {
        let response = HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        let found = #expect(throws: OAuthError.self) { try TokenResponse.token(from: response, secrets: ["abcdefgh12345"], now: now) }
        #expect(!String(describing: found).contains("abcdefgh12345"))
        #expect(String(describing: found).contains("unrecognised_error"))
    }

    @Test func serverErrorWithAPlainBodyIsAnHTTPStatusAndTransient() {
        let found = error(500, "Internal Server Error\n", type: "text/plain")
        #expect(found == .httpStatus(500, endpoint: .token))
        #expect(found?.isTransient == true)
        #expect(String(describing: found!).contains("had a problem (HTTP 500)"))
    }

    @Test func htmlInsteadOfJSONIsNamedAsSuch() {
        let found = error(200, "<!DOCTYPE html><html><body>Sign in to the Wi-Fi</body></html>", type: "text/html")
        #expect(found == .htmlInsteadOfJSON(endpoint: .token))
        #expect(String(describing: found!).contains("web page instead of data"))
    }

    @Test func htmlErrorPageWithAStatusIsThatStatus() {
        #expect(error(502, "<html>Bad Gateway</html>", type: "text/html") == .httpStatus(502, endpoint: .token))
    }

    @Test func emptyBodyIsNamedAsSuch() {
        #expect(error(200, "") == .emptyResponse(endpoint: .token))
        #expect(error(200, "   \n", type: nil) == .emptyResponse(endpoint: .token))
    }

    @Test func truncatedJSONIsMalformed() {
        let found = error(200, #"{"access_token":"sbx_at_trunc"#)
        #expect(found == .malformedResponse(endpoint: .token, reason: "cut-off or invalid JSON"))
        #expect(found?.isTransient == true)
    }

    @Test func aSuccessWithoutAccessTokenIsMalformed() {
        #expect(error(200, #"{"token_type":"Bearer"}"#) == .malformedResponse(endpoint: .token, reason: "no access_token"))
    }

    @Test func a401WithoutBodyAtTheTokenEndpointMeansTheClientWasRefused() {
        #expect(error(401, "", type: nil) == .invalidClient(description: nil))
    }

    @Test func hostileErrorCodesAreNotEchoed() {
        let found = error(400, #"{"error":"<script>alert(1)</script>"}"#)
        #expect(found == .tokenEndpoint(code: "unrecognised_error", description: nil))
    }
}

@Suite struct TokenTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func expiryArithmeticHonoursTheMargin() {
        let token = Token(accessToken: "a", expiresAt: now.addingTimeInterval(90))
        #expect(!token.expires(within: 60, now: now))
        #expect(token.expires(within: 90, now: now))
        #expect(token.expires(within: 60, now: now.addingTimeInterval(31)))
        #expect(token.expires(within: 0, now: now.addingTimeInterval(91)))
        #expect(!Token(accessToken: "a").expires(within: 1e9, now: now), "unknown lifetime: valid until refused")
    }

    @Test func codableRoundTripKeepsEverything() throws {
        let token = Token(
            accessToken: "a", refreshToken: "r", scope: "s", idToken: "i", expiresAt: now.addingTimeInterval(5), receivedAt: now)
        let decoded = try JSONDecoder().decode(Token.self, from: try JSONEncoder().encode(token))
        #expect(decoded == token)
    }

    @Test func descriptionShowsNoSecret() {
        let token = Token(accessToken: "access-secret-1", refreshToken: "refresh-secret-2", idToken: "id-secret-3", expiresAt: now)
        for secret in ["access-secret-1", "refresh-secret-2", "id-secret-3"] {
            #expect(!token.description.contains(secret))
            #expect(!String(reflecting: token).contains(secret))
            var dumped = ""
            dump(token, to: &dumped)
            #expect(!dumped.contains(secret))
        }
        #expect(token.description.contains("refreshable"))
    }
}
