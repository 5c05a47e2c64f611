import Crypto
import Foundation
import TestSupport
import Testing

@Suite struct TokenEndpointTests {
    let sandbox: RunningSandbox
    let browser: Browser
    var tokenURL: String { "\(sandbox.baseURL)/token" }

    init() async throws {
        sandbox = try await RunningSandbox.start()
        browser = Browser(sandbox: sandbox)
    }

    func exchange(
        code: String, verifier: String?, redirectURI: String = Clients.https, client: String = Clients.publicID,
        extra: [(String, String)] = [], headers: [String: String] = [:]
    ) async throws -> Reply {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("client_id", client)]
        if let verifier { fields.append(("code_verifier", verifier)) }
        return try await browser.http.postForm(tokenURL, fields + extra, headers: headers)
    }

    @Test func codeWithPKCEGivesBearerTokensMarkedNoStore() async throws {
        let reply = try await browser.tokens()
        #expect(reply.status == 200)
        #expect(reply.header("cache-control") == "no-store")
        #expect(reply.header("pragma") == "no-cache")
        #expect(reply.header("content-type") == "application/json")
        let body = reply.json
        #expect((body["access_token"] as? String)?.isEmpty == false)
        #expect((body["refresh_token"] as? String)?.isEmpty == false)
        #expect(body["token_type"] as? String == "Bearer")
        #expect(body["expires_in"] as? Int == 3600)
        #expect(body["scope"] as? String == "openid profile email")
    }

    @Test func idTokenIsSignedByThePublishedKeyAndCarriesTheNonce() async throws {
        let pkce = PKCE()
        let code = try await browser.code(Browser.parameters(pkce: pkce, nonce: "n-0S6_WzA2Mj"))
        let reply = try await exchange(code: code, verifier: pkce.verifier)
        let idToken = try #require(reply.json["id_token"] as? String)
        let parts = idToken.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let header = try #require(try JSONSerialization.jsonObject(with: Self.base64url(parts[0])) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: Self.base64url(parts[1])) as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        #expect(claims["iss"] as? String == sandbox.baseURL)
        #expect(claims["aud"] as? String == Clients.publicID)
        #expect(claims["nonce"] as? String == "n-0S6_WzA2Mj")
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(exp > iat)
        #expect(abs(Double(iat) - Date().timeIntervalSince1970) < 60)
        #expect((claims["sub"] as? String)?.isEmpty == false)
        #expect(claims["sub"] as? String != "ada", "sub is opaque, not the username")

        let jwks = try await browser.http.get("\(sandbox.baseURL)/jwks.json").json
        let key = try #require((jwks["keys"] as? [[String: Any]])?.first)
        #expect(key["kid"] as? String == header["kid"] as? String)
        let x = try Self.base64url(#require(key["x"] as? String))
        let y = try Self.base64url(#require(key["y"] as? String))
        let publicKey = try P256.Signing.PublicKey(rawRepresentation: x + y)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Self.base64url(parts[2]))
        #expect(publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(!publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])x".utf8)))
    }

    @Test func withoutOpenIDScopeThereIsNoIDToken() async throws {
        let reply = try await browser.tokens(scope: "profile")
        #expect(reply.status == 200)
        #expect(reply.json["id_token"] == nil)
    }

    @Test func confidentialClientAuthenticatesWithBasicOrPost() async throws {
        for method in ["basic", "post"] {
            let code = try await browser.code(Browser.parameters(client: Clients.confidentialID, pkce: nil))
            var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https)]
            var headers: [String: String] = [:]
            if method == "basic" {
                headers["Authorization"] = HTTPClient.basic(Clients.confidentialID, Clients.secret)
            } else {
                fields += [("client_id", Clients.confidentialID), ("client_secret", Clients.secret)]
            }
            let reply = try await browser.http.postForm(tokenURL, fields, headers: headers)
            #expect(reply.status == 200, "client_secret_\(method)")
            #expect(reply.json["access_token"] != nil, "client_secret_\(method)")
        }
    }

    @Test func reusedCodeIsInvalidGrantAndRevokesWhatItIssued() async throws {
        let pkce = PKCE()
        let code = try await browser.code(Browser.parameters(pkce: pkce))
        let first = try await exchange(code: code, verifier: pkce.verifier)
        let accessToken = try #require(first.json["access_token"] as? String)
        let refreshToken = try #require(first.json["refresh_token"] as? String)
        #expect(try await browser.userinfo(accessToken).status == 200)

        let second = try await exchange(code: code, verifier: pkce.verifier)
        #expect(second.status == 400)
        #expect(second.error == "invalid_grant")
        #expect(second.header("cache-control") == "no-store")
        #expect(try await browser.userinfo(accessToken).status == 401)
        #expect(try await browser.refresh(refreshToken).error == "invalid_grant")
    }

    @Test func wrongVerifierIsInvalidGrant() async throws {
        let pkce = PKCE()
        let code = try await browser.code(Browser.parameters(pkce: pkce))
        let reply = try await exchange(code: code, verifier: PKCE().verifier)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
    }

    @Test func missingVerifierIsInvalidRequest() async throws {
        let code = try await browser.code(Browser.parameters(pkce: PKCE()))
        let reply = try await exchange(code: code, verifier: nil)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_request")
    }

    @Test func verifierWithoutChallengeIsInvalidGrant() async throws {
        let code = try await browser.code(Browser.parameters(client: Clients.confidentialID, pkce: nil))
        let reply = try await exchange(
            code: code, verifier: PKCE().verifier, client: Clients.confidentialID, extra: [("client_secret", Clients.secret)])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
    }

    @Test func differentRedirectURIIsInvalidGrant() async throws {
        let pkce = PKCE()
        let code = try await browser.code(Browser.parameters(redirectURI: Clients.https, pkce: pkce))
        let reply = try await exchange(code: code, verifier: pkce.verifier, redirectURI: Clients.privateUse)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
    }

    @Test func missingRedirectURIIsInvalidRequest() async throws {
        let pkce = PKCE()
        let code = try await browser.code(Browser.parameters(pkce: pkce))
        let reply = try await browser.http.postForm(
            tokenURL,
            [("grant_type", "authorization_code"), ("code", code), ("client_id", Clients.publicID), ("code_verifier", pkce.verifier)])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_request")
    }

    @Test func codeIssuedToAnotherClientIsInvalidGrant() async throws {
        let code = try await browser.code(Browser.parameters(client: Clients.confidentialID, pkce: nil))
        let reply = try await exchange(code: code, verifier: nil, client: Clients.publicID)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
    }

    @Test func unknownCodeIsInvalidGrant() async throws {
        let reply = try await exchange(code: "sbx_code_made_up", verifier: PKCE().verifier)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
    }

    @Test func wrongSecretIsInvalidClientWith401AndABasicChallenge() async throws {
        let code = try await browser.code(Browser.parameters(client: Clients.confidentialID, pkce: nil))
        let reply = try await browser.http.postForm(
            tokenURL, [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https)],
            headers: ["Authorization": HTTPClient.basic(Clients.confidentialID, "wrong")])
        #expect(reply.status == 401)
        #expect(reply.error == "invalid_client")
        #expect(reply.header("www-authenticate")?.hasPrefix("Basic") == true)
    }

    @Test func unknownClientIsInvalidClient() async throws {
        let reply = try await exchange(code: "x", verifier: nil, client: "nobody")
        #expect(reply.status == 401)
        #expect(reply.error == "invalid_client")
    }

    @Test func confidentialClientWithoutSecretIsInvalidClient() async throws {
        let code = try await browser.code(Browser.parameters(client: Clients.confidentialID, pkce: nil))
        let reply = try await exchange(code: code, verifier: nil, client: Clients.confidentialID)
        #expect(reply.status == 401)
        #expect(reply.error == "invalid_client")
    }

    @Test func twoAuthenticationMethodsAtOnceIsInvalidRequest() async throws {
        let reply = try await browser.http.postForm(
            tokenURL,
            [("grant_type", "authorization_code"), ("code", "x"), ("redirect_uri", Clients.https), ("client_secret", Clients.secret)],
            headers: ["Authorization": HTTPClient.basic(Clients.confidentialID, Clients.secret)])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_request")
    }

    @Test func unknownGrantTypeIsUnsupportedGrantType() async throws {
        let reply = try await browser.http.postForm(
            tokenURL, [("grant_type", "password"), ("username", "ada"), ("password", "engine"), ("client_id", Clients.publicID)])
        #expect(reply.status == 400)
        #expect(reply.error == "unsupported_grant_type")
    }

    @Test func missingGrantTypeIsInvalidRequest() async throws {
        let reply = try await browser.http.postForm(tokenURL, [("code", "x"), ("client_id", Clients.publicID)])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_request")
    }

    @Test func jsonBodyIsInvalidRequest() async throws {
        let reply = try await browser.http.send(
            method: "POST", tokenURL, headers: ["Content-Type": "application/json"],
            body: Data(#"{"grant_type":"authorization_code"}"#.utf8))
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_request")
    }

    @Test func errorsCarryADescriptionForPeople() async throws {
        let reply = try await exchange(code: "sbx_code_made_up", verifier: PKCE().verifier)
        #expect((reply.json["error_description"] as? String)?.isEmpty == false)
    }

    static func base64url(_ text: String) -> Data {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64) ?? Data()
    }
}
