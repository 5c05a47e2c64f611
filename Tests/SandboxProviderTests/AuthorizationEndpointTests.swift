import Foundation
import TestSupport
import Testing

@Suite struct AuthorizationEndpointTests {
    let sandbox: RunningSandbox
    let browser: Browser

    init() async throws {
        sandbox = try await RunningSandbox.start()
        browser = Browser(sandbox: sandbox)
    }

    func open(_ parameters: [(String, String)]) async throws -> Reply {
        try await browser.http.get(browser.authorizeURL(parameters))
    }

    @Test func allowWithTheRightPasswordRedirectsWithCodeStateAndIssuer() async throws {
        let reply = try await browser.submit(Browser.parameters(state: "s-123"))
        #expect(reply.status == 302)
        let location = try #require(reply.header("location"))
        #expect(location.hasPrefix(Clients.https + "?"))
        let query = reply.redirectParameters
        #expect(query["code"]?.isEmpty == false)
        #expect(query["state"] == "s-123")
        #expect(query["iss"] == sandbox.baseURL)
        #expect(query["error"] == nil)
    }

    @Test(arguments: [Clients.https, Clients.privateUse, "http://127.0.0.1:49152/callback", "http://127.0.0.1/callback"])
    func everyRegisteredKindOfRedirectURIWorks(redirectURI: String) async throws {
        let reply = try await browser.submit(Browser.parameters(redirectURI: redirectURI))
        #expect(reply.status == 302)
        #expect(reply.header("location")?.hasPrefix(redirectURI + "?code=") == true)
    }

    @Test func denyRedirectsWithAccessDeniedAndTheState() async throws {
        let reply = try await browser.submit(Browser.parameters(state: "s-deny"), action: "deny", password: "")
        #expect(reply.status == 302)
        #expect(reply.redirectParameters["error"] == "access_denied")
        #expect(reply.redirectParameters["state"] == "s-deny")
        #expect(reply.redirectParameters["code"] == nil)
    }

    @Test func wrongPasswordShowsTheFormAgainWith401() async throws {
        let page = try await open(Browser.parameters())
        let id = try #require(Browser.requestID(in: page.text))
        let wrong = try await browser.http.postForm(
            "\(sandbox.baseURL)/authorize", [("request_id", id), ("username", "ada"), ("password", "nope"), ("action", "allow")])
        #expect(wrong.status == 401)
        #expect(wrong.text.contains("That username and password do not match"))
        #expect(wrong.text.contains(#"role="alert""#))
        #expect(Browser.requestID(in: wrong.text) == id, "the same sign-in continues")
        let right = try await browser.http.postForm(
            "\(sandbox.baseURL)/authorize", [("request_id", id), ("username", "ada"), ("password", "engine"), ("action", "allow")])
        #expect(right.status == 302)
        #expect(right.redirectParameters["code"] != nil)
    }

    @Test func aSignInFormCanBeAnsweredOnce() async throws {
        let page = try await open(Browser.parameters())
        let id = try #require(Browser.requestID(in: page.text))
        let form = [("request_id", id), ("username", "ada"), ("password", "engine"), ("action", "allow")]
        #expect(try await browser.http.postForm("\(sandbox.baseURL)/authorize", form).status == 302)
        let again = try await browser.http.postForm("\(sandbox.baseURL)/authorize", form)
        #expect(again.status == 400)
        #expect(again.header("location") == nil)
    }

    @Test func unknownClientGetsAnErrorPageNeverARedirect() async throws {
        let reply = try await open(Browser.parameters(client: "who-is-this"))
        #expect(reply.status == 400)
        #expect(reply.header("location") == nil)
        #expect(reply.text.contains("Unknown application"))
    }

    @Test(arguments: [
        "https://latchkey.invalid.evil.example/oauth2/callback",
        "https://latchkey.invalid@evil.example/oauth2/callback",
        "https://latchkey.invalid/oauth2/callback/../../evil",
        "https://latchkey.invalid/oauth2/callbackx",
        "https://latchkey.invalid:8443/oauth2/callback",
        "http://latchkey.invalid/oauth2/callback",
        "http://127.0.0.1:8080/other",
        "http://localhost:8080/callback",
        "io.github.latchkey:/oauth2redirect/more",
    ])
    func unregisteredRedirectURIGetsAnErrorPageNeverARedirect(redirectURI: String) async throws {
        let reply = try await open(Browser.parameters(redirectURI: redirectURI))
        #expect(reply.status == 400)
        #expect(reply.header("location") == nil)
        #expect(reply.text.contains("Unregistered redirect URI"))
    }

    @Test func missingRedirectURIGetsAnErrorPage() async throws {
        let reply = try await open(Browser.parameters().filter { $0.0 != "redirect_uri" })
        #expect(reply.status == 400)
        #expect(reply.header("location") == nil)
    }

    /// Once client and redirect URI are trusted, errors go back to the client (RFC 6749 §4.1.2.1).
    @Test(arguments: [
        ("response_type", "token", "unsupported_response_type"),
        ("response_type", "", "invalid_request"),
        ("scope", "openid admin", "invalid_scope"),
        ("scope", "", "invalid_scope"),
        ("code_challenge_method", "plain", "invalid_request"),
        ("code_challenge", "too-short", "invalid_request"),
        ("state", "", "invalid_request"),
    ])
    func badParameterRedirectsWithTheErrorCode(name: String, value: String, error: String) async throws {
        var parameters = Browser.parameters(state: "s-err").filter { $0.0 != name }
        if !value.isEmpty { parameters.append((name, value)) }
        let reply = try await open(parameters)
        #expect(reply.status == 302)
        #expect(reply.redirectParameters["error"] == error)
        #expect(reply.redirectParameters["error_description"]?.isEmpty == false)
        if name != "state" { #expect(reply.redirectParameters["state"] == "s-err") }
    }

    @Test func publicClientWithoutPKCEIsRefused() async throws {
        let reply = try await open(Browser.parameters(pkce: nil))
        #expect(reply.status == 302)
        #expect(reply.redirectParameters["error"] == "invalid_request")
    }

    @Test func confidentialClientMayOmitPKCE() async throws {
        let page = try await open(Browser.parameters(client: Clients.confidentialID, pkce: nil))
        #expect(page.status == 200)
    }

    @Test func aParameterSentTwiceIsRefused() async throws {
        let reply = try await open(Browser.parameters(state: "s-dup") + [("scope", "email")])
        #expect(reply.status == 302)
        #expect(reply.redirectParameters["error"] == "invalid_request")
    }

    @Test func redirectURIWithAnUnregisteredQueryIsRefused() async throws {
        // The query is part of the comparison: a registered URI plus a query is another URI.
        let reply = try await open(Browser.parameters(redirectURI: Clients.https + "?app=1"))
        #expect(reply.status == 400)
    }
}
