import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// Issue 28: pushed authorization requests (RFC 9126) against the real sandbox, and the
/// push's answers that cannot be used.
@Suite struct PushedAuthorizationTests {
    /// The query of an address, by name.
    static func query(_ url: URL?) -> [String: String] {
        let items = url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems } ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    @Test func discoveryFindsThePushEndpointAndWhetherItIsRequired() async throws {
        let required = try await RunningSandbox.start(["--pushed-requests", "required"])
        let file = try await ProviderDiscovery.providerFile(issuer: required.baseURL)
        #expect(file.pushedAuthorizationRequestEndpoint.value == "\(required.baseURL)/par")
        #expect(file.requirePushedAuthorizationRequests.value == true)
        let offered = try await RunningSandbox.start(["--pushed-requests", "offered"])
        let optional = try await ProviderDiscovery.providerFile(issuer: offered.baseURL)
        #expect(optional.pushedAuthorizationRequestEndpoint.value == "\(offered.baseURL)/par")
        #expect(optional.requirePushedAuthorizationRequests.value == nil)
        let plain = try await RunningSandbox.start()
        #expect(try await ProviderDiscovery.providerFile(issuer: plain.baseURL).pushedAuthorizationRequestEndpoint.value == nil)
    }

    @Test func aPushedSignInGivesThePageOnlyTheClientAndTheReference() async throws {
        let live = try await LiveSandbox(
            ["--pushed-requests", "required"],
            overrides: ["pushed_authorization_request_endpoint": "/par"], adjust: { $0.requirePushedAuthorizationRequests = true })
        let agent = FormPostingUserAgent()
        let session = live.session()
        let outcome = try await session.signIn(using: agent)
        #expect(outcome.token.accessToken.hasPrefix("sbx_at_"))
        let shown = Self.query(agent.presented)
        #expect(Set(shown.keys) == ["client_id", "request_uri"], "the page's address carries nothing else: \(shown.keys)")
        #expect(shown["request_uri"]?.hasPrefix("urn:ietf:params:oauth:request_uri:") == true)
        #expect(try await session.freshToken().accessToken == outcome.token.accessToken)
        let stats = try await HTTPClient().get("\(live.sandbox.baseURL)/_admin/stats").json
        #expect(stats["pushed_requests"] as? Int == 1)
        let state = try #require(Self.query(agent.redirect)["state"])
        #expect(!live.log.text.contains(state) && !live.log.text.contains(outcome.token.accessToken))
    }

    @Test func aConfidentialClientAuthenticatesItsPushAndAWrongSecretIsRefused() async throws {
        for method in ["client_secret_basic", "client_secret_post"] {
            let live = try await LiveSandbox(
                ["--pushed-requests", "required"],
                overrides: [
                    "pushed_authorization_request_endpoint": "/par", "client_id": "latchkey-confidential",
                    "client_secret": "sandbox-secret", "client_authentication": method,
                ])
            let agent = FormPostingUserAgent()
            _ = try await live.session().signIn(using: agent)
            #expect(Self.query(agent.presented)["client_id"] == "latchkey-confidential")
            #expect(!(agent.presented?.absoluteString.contains("sandbox-secret") ?? true))
        }
        let wrong = try await LiveSandbox(
            ["--pushed-requests", "required"],
            overrides: [
                "pushed_authorization_request_endpoint": "/par", "client_id": "latchkey-confidential", "client_secret": "not-the-secret",
                "client_authentication": "client_secret_basic",
            ])
        let agent = FormPostingUserAgent()
        let error = await #expect(throws: OAuthError.self) { try await wrong.session().signIn(using: agent) }
        #expect("\(error!)".contains("client credentials"), "\(error!)")
        #expect(agent.presented == nil && !wrong.log.text.contains("not-the-secret"))
    }

    @Test func aProviderThatRequiresPushesRefusesTheRequestInTheAddress() async throws {
        // The provider file does not know the push endpoint: the request goes in the address, and the page refuses it.
        let live = try await LiveSandbox(["--pushed-requests", "required"])
        let agent = FormPostingUserAgent()
        let error = await #expect(throws: OAuthError.self) { try await live.session().signIn(using: agent) }
        #expect("\(error!)".contains("HTTP 400"), "\(error!)")
        #expect(Self.query(agent.presented)["state"] != nil)
        #expect(try live.store.load(for: "sandbox") == nil)
    }

    @Test func aRequestURIIsUsedOnceAndByItsClientOnly() async throws {
        let live = try await LiveSandbox(["--pushed-requests", "offered"], overrides: ["pushed_authorization_request_endpoint": "/par"])
        let request = AuthorizationRequest(configuration: live.configuration)
        let url = try await live.tokenClient().push(request)
        let first = try await HTTPClient().get(url.absoluteString)
        #expect(first.status == 200 && first.text.contains("Username"))
        let again = try await HTTPClient().get(url.absoluteString)
        #expect(again.status == 400 && again.text.contains("not known here"))
        let other = try await live.tokenClient().push(AuthorizationRequest(configuration: live.configuration))
        let stolen = other.absoluteString.replacingOccurrences(of: "client_id=latchkey-desktop", with: "client_id=latchkey-confidential")
        #expect(try await HTTPClient().get(stolen).status == 400)
        // Named by another client, it was not used up: its own client still opens it.
        #expect(try await HTTPClient().get(other.absoluteString).status == 200)
    }

    @Test func requiredWithoutAnEndpointIsSaidBeforeAnythingOpens() async throws {
        let live = try await LiveSandbox(["--pushed-requests", "required"], adjust: { $0.requirePushedAuthorizationRequests = true })
        let agent = FormPostingUserAgent()
        let error = await #expect(throws: OAuthError.self) { try await live.session().signIn(using: agent) }
        #expect("\(error!)".contains("pushed authorization requests only"), "\(error!)")
        #expect(agent.presented == nil)
    }

    /// What the push endpoint answers, by the path asked (`/par/<case>`).
    static let answers = """
        import http.server, json
        ANSWERS = {
            "/par/no-request-uri": (201, "application/json", json.dumps({"expires_in": 60})),
            "/par/expires-at-once": (201, "application/json", json.dumps({"request_uri": "urn:x:1", "expires_in": 0})),
            "/par/not-a-uri": (201, "application/json", json.dumps({"request_uri": "two words", "expires_in": 60})),
            "/par/html": (200, "text/html", "<html><body>Sign in to continue</body></html>"),
            "/par/refused": (400, "application/json", json.dumps({"error": "invalid_request", "error_description": "Pushed requests are off today."})),
            "/par/500": (500, "text/plain", "oops"),
            "/par/empty": (201, "application/json", ""),
        }
        class Answers(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, kind, body = ANSWERS[self.path]
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Answers)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    @Test(arguments: [
        ("no-request-uri", "no request_uri"), ("expires-at-once", "expires_in under a second"),
        ("not-a-uri", "not a URI"), ("html", "web page"), ("refused", "Pushed requests are off today."),
        ("500", "HTTP 500"), ("empty", "answered with nothing"),
    ])
    func aPushAnswerThatCannotBeUsedIsSaidAndNothingIsKept(path: String, words: String) async throws {
        let server = try await PythonServer.start(script: Self.answers, what: "the push endpoint")
        defer { server.stop() }
        let live = try await LiveSandbox(overrides: ["pushed_authorization_request_endpoint": "http://127.0.0.1:\(server.port)/par/\(path)"]
        )
        let kept = Token(accessToken: "at-kept", refreshToken: "rt-kept", scope: "openid", expiresAt: Date().addingTimeInterval(3600))
        try live.store.save(kept, for: "sandbox")
        let agent = FormPostingUserAgent()
        let error = await #expect(throws: OAuthError.self) { try await live.session().signIn(using: agent) }
        #expect("\(error!)".localizedCaseInsensitiveContains(words), "\(error!)")
        if path != "refused" { #expect("\(error!)".contains("pushed authorization request endpoint"), "\(error!)") }
        #expect(agent.presented == nil && agent.dismissed, "nothing is shown, and the agent is let go")
        #expect(try live.store.load(for: "sandbox")?.accessToken == "at-kept")
    }
}
