import Foundation
import OAuthCore
import TestSupport
import Testing

/// Issue 24 §1.7: every way a real OAuth 1.0a provider says "no" ends as "Sign-in cancelled.",
/// in the window and through the browser's listener alike. The provider is Python's oauthlib
/// (its request-token, authorization and access-token endpoints over a validator of this test's),
/// so nothing of OAuthCore's or the sandbox's reading of RFC 5849 is on both sides.
@Suite struct OAuth1DenyInteropTests {
    /// An OAuth 1.0a provider on oauthlib. Its authorization page answers at once with what the
    /// `decision` parameter says: allow, or one of the refusals providers send.
    static let script = #"""
        import http.server, string, urllib.parse
        from oauthlib.oauth1 import RequestValidator, RequestTokenEndpoint, AuthorizationEndpoint, AccessTokenEndpoint

        CONSUMER, SECRET = "latchkey-consumer-key-01", "consumer-secret"
        request_tokens, verifiers, access_tokens, nonces = {}, {}, {}, set()

        class Validator(RequestValidator):
            enforce_ssl = False
            # Keys, tokens and nonces of letters, digits, - and _ (base64url, as OAuthCore's nonces are).
            safe_characters = set(string.ascii_letters + string.digits + "-_")
            client_key_length = request_token_length = access_token_length = (20, 64)
            nonce_length = verifier_length = (20, 64)
            dummy_client = "dummy-consumer-key-000000"
            dummy_request_token = "dummy-request-token-000000"
            dummy_access_token = "dummy-access-token-0000000"
            def check_realms(self, realms): return True
            def get_default_realms(self, client_key, request): return []
            def get_realms(self, token, request): return []
            def validate_client_key(self, client_key, request): return client_key == CONSUMER
            def get_client_secret(self, client_key, request): return SECRET
            def validate_requested_realms(self, client_key, realms, request): return True
            def validate_realms(self, client_key, token, request, uri=None, realms=None): return True
            def validate_redirect_uri(self, client_key, redirect_uri, request):
                return redirect_uri.startswith("http://127.0.0.1")
            def validate_timestamp_and_nonce(self, client_key, timestamp, nonce, request, request_token=None, access_token=None):
                key = (client_key, timestamp, nonce, request_token, access_token)
                if key in nonces: return False
                nonces.add(key)
                return True
            def save_request_token(self, token, request):
                request_tokens[token["oauth_token"]] = (token["oauth_token_secret"], request.redirect_uri)
            def verify_request_token(self, token, request): return token in request_tokens
            def get_redirect_uri(self, token, request): return request_tokens[token][1]
            def save_verifier(self, token, verifier, request): verifiers[token] = verifier["oauth_verifier"]
            def validate_request_token(self, client_key, token, request): return token in request_tokens
            def get_request_token_secret(self, client_key, token, request): return request_tokens[token][0]
            def validate_verifier(self, client_key, token, verifier, request): return verifiers.get(token) == verifier
            def verify_realms(self, token, realms, request): return True
            def save_access_token(self, token, request): access_tokens[token["oauth_token"]] = token["oauth_token_secret"]
            def invalidate_request_token(self, client_key, request_token, request):
                request_tokens.pop(request_token, None)
                verifiers.pop(request_token, None)

        validator = Validator()
        endpoints = {"/request_token": RequestTokenEndpoint(validator).create_request_token_response,
                     "/access_token": AccessTokenEndpoint(validator).create_access_token_response}
        authorize = AuthorizationEndpoint(validator)

        class Provider(http.server.BaseHTTPRequestHandler):
            def reply(self, status, headers, body):
                data = (body or "").encode()
                self.send_response(status)
                for name, value in headers.items(): self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            def uri(self): return "http://%s%s" % (self.headers["Host"], self.path)
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                handler = endpoints.get(self.path.split("?")[0])
                if not handler: return self.reply(404, {}, "")
                headers, body, status = handler(self.uri(), http_method="POST", body=body, headers=dict(self.headers))
                self.reply(status, headers, body)
            def do_GET(self):
                if not self.path.startswith("/authorize"): return self.reply(404, {}, "")
                query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
                token, decision = query.get("oauth_token", ""), query.get("decision")
                if token not in request_tokens: return self.reply(400, {}, "unknown request token")
                if decision == "allow":
                    headers, body, status = authorize.create_authorization_response(self.uri(), realms=[])
                    return self.reply(status, headers, body)
                callback = request_tokens[token][1]
                refusal = {"problem": {"oauth_problem": "user_refused"},
                           "permission-denied": {"oauth_problem": "permission_denied"},
                           "denied": {"denied": token},
                           "token-and-problem": {"oauth_token": token, "oauth_problem": "user_refused"},
                           "token-alone": {"oauth_token": token}}[decision]
                separator = "&" if "?" in callback else "?"
                self.reply(302, {"Location": callback + separator + urllib.parse.urlencode(refusal)}, "")
            def log_message(self, *args): pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Provider)
        print(server.server_port, flush=True)
        server.serve_forever()
        """#

    /// A user agent that does what a browser (or the embedded view) does with the page: GETs the
    /// authorization URL and hands the redirect it answers with to the flow — through the view's
    /// `resume`, or as the browser's listener receives it (`resumeFromListener`), where a request
    /// the listener refuses gets a 404 and the flow waits on (this agent then says so).
    final class RedirectFollowingAgent: ExternalUserAgent, @unchecked Sendable {
        let throughListener: Bool
        init(throughListener: Bool) { self.throughListener = throughListener }

        func present(_ flow: any SignInFlow) async throws {
            let url = flow.authorizationURL.absoluteString
            let listener = throughListener
            Task {
                do {
                    let reply = try await HTTPClient().get(url)
                    guard let location = reply.header("location"), let redirect = URL(string: location) else {
                        flow.fail(.userAgent("the page answered HTTP \(reply.status)"))
                        return
                    }
                    let taken = listener ? flow.resumeFromListener(with: redirect, method: "GET") : flow.resume(with: redirect)
                    if !taken { flow.fail(.userAgent("the redirect was refused (the listener answered 404)")) }
                } catch {
                    flow.fail(.userAgent("\(error)"))
                }
            }
        }

        func dismiss(_ flow: any SignInFlow) async {}
    }

    func configuration(port: Int, decision: String) throws -> ProviderConfiguration {
        let base = "http://127.0.0.1:\(port)"
        return try ProviderConfiguration(
            id: "oauthlib", displayName: "oauthlib", authorizationEndpoint: URL(string: "\(base)/authorize")!,
            tokenEndpoint: URL(string: "\(base)/access_token")!, clientID: "latchkey-consumer-key-01", clientSecret: "consumer-secret",
            redirectURI: URL(string: "http://127.0.0.1/callback")!, scopes: [], authorizationParameters: ["decision": decision],
            authProtocol: .oauth1, requestTokenEndpoint: URL(string: "\(base)/request_token")!)
    }

    static let refusals = ["problem", "permission-denied", "denied", "token-and-problem", "token-alone"]

    @Test(arguments: refusals, [false, true])
    func everyWayOfSayingNoEndsAsCancelled(decision: String, throughListener: Bool) async throws {
        let server = try await PythonServer.start(script: Self.script, what: "oauthlib's OAuth 1.0a provider")
        defer { server.stop() }
        let store = MemoryTokenStore()
        let earlier = Token(accessToken: "earlier-token", tokenType: "OAuth1", tokenSecret: "earlier-secret")
        let configuration = try configuration(port: server.port, decision: decision)
        try store.save(earlier, for: configuration.id)
        let session = AuthSession(configuration: configuration, store: store)
        let error = await #expect(throws: OAuthError.self) {
            _ = try await session.signIn(using: RedirectFollowingAgent(throughListener: throughListener))
        }
        #expect(error == .cancelled, "\(decision), \(throughListener ? "browser" : "window"): \(String(describing: error))")
        #expect(try store.load(for: configuration.id) == earlier, "a refusal keeps the sign-in there was")
    }

    /// The same provider, allowing: token credentials from oauthlib's access-token endpoint.
    @Test(arguments: [false, true])
    func allowingSignsIn(throughListener: Bool) async throws {
        let server = try await PythonServer.start(script: Self.script, what: "oauthlib's OAuth 1.0a provider")
        defer { server.stop() }
        let configuration = try configuration(port: server.port, decision: "allow")
        let session = AuthSession(configuration: configuration, store: MemoryTokenStore())
        let outcome = try await session.signIn(using: RedirectFollowingAgent(throughListener: throughListener))
        #expect(!outcome.token.accessToken.isEmpty && outcome.token.tokenSecret?.isEmpty == false)
    }
}
