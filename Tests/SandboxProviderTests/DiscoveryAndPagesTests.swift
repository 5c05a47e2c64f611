import Foundation
import TestSupport
import Testing

@Suite struct DiscoveryAndPagesTests {
    @Test func openIDConfigurationDescribesEveryEndpoint() async throws {
        let sandbox = try await RunningSandbox.start()
        let reply = try await HTTPClient().get("\(sandbox.baseURL)/.well-known/openid-configuration")
        #expect(reply.status == 200)
        let document = reply.json
        #expect(document["issuer"] as? String == sandbox.baseURL)
        for (key, path) in [
            ("authorization_endpoint", "/authorize"), ("token_endpoint", "/token"), ("revocation_endpoint", "/revoke"),
            ("userinfo_endpoint", "/userinfo"), ("jwks_uri", "/jwks.json"),
        ] {
            #expect(document[key] as? String == sandbox.baseURL + path, "\(key)")
        }
        #expect(document["code_challenge_methods_supported"] as? [String] == ["S256"])
        #expect(document["token_endpoint_auth_methods_supported"] as? [String] == ["client_secret_basic", "client_secret_post", "none"])
        #expect(document["response_types_supported"] as? [String] == ["code"])
    }

    @Test func authorizationServerMetadataMatchesTheOpenIDDocument() async throws {
        let sandbox = try await RunningSandbox.start()
        let http = HTTPClient()
        let rfc8414 = try await http.get("\(sandbox.baseURL)/.well-known/oauth-authorization-server")
        let oidc = try await http.get("\(sandbox.baseURL)/.well-known/openid-configuration")
        #expect(rfc8414.status == 200)
        #expect(rfc8414.body == oidc.body, "one document, serialised with sorted keys")
        #expect(rfc8414.json["issuer"] as? String == sandbox.baseURL)
    }

    @Test func theDocumentSaysHowLongToKeepItAndAnswersAConditionalRequestWith304() async throws {
        let sandbox = try await RunningSandbox.start(["--discovery-max-age", "120"])
        let http = HTTPClient()
        let url = "\(sandbox.baseURL)/.well-known/openid-configuration"
        let whole = try await http.get(url)
        #expect(whole.header("cache-control") == "public, max-age=120")
        let tag = try #require(whole.header("etag"))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\""))
        let same = try await http.get(url, headers: ["If-None-Match": "\"other\", \(tag)"])
        #expect(same.status == 304 && same.body.isEmpty)
        #expect(same.header("cache-control") == "public, max-age=120")
        #expect(try await http.get(url, headers: ["If-None-Match": "\"other\""]).status == 200)
        // The RFC 8414 location carries the same document, so the same tag.
        #expect(
            try await http.get("\(sandbox.baseURL)/.well-known/oauth-authorization-server", headers: ["If-None-Match": tag]).status == 304)
        let counted = try await sandbox.statistics()
        #expect(counted["discovery_requests"] == 2 && counted["discovery_not_modified"] == 2)
        try await sandbox.setFault("discovery", "500")
        #expect(try await http.get(url).status == 500)
        #expect(try await http.get(url).status == 200)
    }

    @Test func signInPageIsAnAccessibleFormWithNoExternalResources() async throws {
        let sandbox = try await RunningSandbox.start()
        let browser = Browser(sandbox: sandbox)
        let page = try await browser.http.get(browser.authorizeURL(Browser.parameters()))
        #expect(page.status == 200)
        #expect(page.header("content-type")?.hasPrefix("text/html") == true)
        #expect(page.header("cache-control") == "no-store")
        let html = page.text
        #expect(html.contains(#"<label for="username">Username</label>"#))
        #expect(html.contains(#"<input id="username" name="username""#))
        #expect(html.contains(#"<label for="password">Password</label>"#))
        #expect(html.contains(#"<input id="password" name="password" type="password""#))
        #expect(html.contains(#"value="allow" class="allow">Allow</button>"#))
        #expect(html.contains(#"value="deny">Deny</button>"#))
        #expect(html.contains("<strong>Latchkey</strong>"), "names the client")
        #expect(html.contains("See your e-mail address"), "lists the scopes requested")
        for external in ["<script", "<link", "src=\"http", "href=\"http", "url("] {
            #expect(!html.contains(external), "external resource: \(external)")
        }
    }

    @Test func profilePageShowsThePersonAndUnknownNamesAre404() async throws {
        let sandbox = try await RunningSandbox.start()
        let http = HTTPClient()
        let page = try await http.get("\(sandbox.baseURL)/in/ada")
        #expect(page.status == 200)
        #expect(page.text.contains("<h1>Ada Lovelace</h1>"))
        let avatar = try await http.get("\(sandbox.baseURL)/avatar/ada.svg")
        #expect(avatar.status == 200)
        #expect(avatar.header("content-type") == "image/svg+xml")
        #expect(try await http.get("\(sandbox.baseURL)/in/nobody").status == 404)
    }

    @Test func listensOnLoopbackOnlyAndLogsNoQueryStrings() async throws {
        let sandbox = try await RunningSandbox.start()
        #expect(sandbox.baseURL.hasPrefix("http://127.0.0.1:"))
        let browser = Browser(sandbox: sandbox)
        let pkce = PKCE()
        let parameters = Browser.parameters(state: "secret-state-value", pkce: pkce)
        let code = try await browser.code(parameters)
        let tokens = try await browser.http.postForm(
            "\(sandbox.baseURL)/token",
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https),
                ("client_id", Clients.publicID), ("code_verifier", pkce.verifier),
            ])
        let accessToken = try #require(tokens.json["access_token"] as? String)
        _ = try await browser.userinfo(accessToken)
        let log = sandbox.log
        #expect(log.contains("GET /authorize 200"))
        #expect(log.contains("POST /token 200"))
        for secret in ["secret-state-value", code, pkce.verifier, pkce.challenge, accessToken, "engine"] {
            #expect(!log.contains(secret), "the log holds a secret")
        }
    }
}
