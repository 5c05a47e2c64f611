import Foundation
import OAuthCore
import TestSupport
import Testing

/// OAuth 1.0a against the real latchkey-sandbox, whose provider reads the RFC
/// on its own: the whole sign-in, and each way the provider refuses.
@Suite struct OAuth1SandboxTests {
    /// The sandbox's OAuth 1.0a preset pointed at a running sandbox.
    struct Live {
        let sandbox: RunningSandbox
        let configuration: ProviderConfiguration
        let log = CapturedLog()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oauth1-\(UUID().uuidString)")

        init(_ overrides: [String: String] = [:]) async throws {
            sandbox = try await RunningSandbox.start()
            configuration = try ProviderCatalog(
                presetDirectories: [Fixtures.presetDirectory], userConfigDirectory: URL(fileURLWithPath: "/nonexistent"), environment: [:]
            ).configuration(named: "sandbox-oauth1", overrides: ["issuer": sandbox.baseURL].merging(overrides) { _, new in new })
        }

        var store: FileTokenStore { FileTokenStore(directory: directory, logger: log.logger) }
        func session(_ configuration: ProviderConfiguration? = nil) -> AuthSession {
            let configuration = configuration ?? self.configuration
            return AuthSession(
                configuration: configuration, store: store,
                tokenClient: TokenClient(configuration: configuration, network: Network(timeout: 10)),
                logger: log.logger)
        }
        func client(now: @escaping @Sendable () -> Date = { Date() }) -> OAuth1Client {
            OAuth1Client(configuration: configuration, network: Network(timeout: 10, logger: log.logger), now: now)
        }
        var callback: URL { URL(string: "http://127.0.0.1:4000/callback")! }

        /// The first half of a sign-in by hand: a request token, the page answered.
        func authorize(_ action: String = "allow") async throws -> (OAuth1Authorization, OAuth1Verifier) {
            let authorization = try await client().temporaryCredentials(callback: callback)
            let flow = OAuth1Flow(authorization: authorization)
            try await FormPostingUserAgent(action: action).present(flow)
            return (authorization, try await flow.verifier())
        }
    }

    // MARK: The whole path

    @Test func signInFetchTheProfileKeepTheSignInAndSignOut() async throws {
        let live = try await Live()
        let outcome = try await live.session().signIn(using: FormPostingUserAgent())
        #expect(outcome.token.tokenType == "OAuth1")
        #expect(outcome.token.tokenSecret?.isEmpty == false)
        #expect(outcome.token.expiresAt == nil && !outcome.token.canRefresh)

        // A new session (a later launch) reads it back, signed in, and signs the profile request with it.
        let later = live.session()
        #expect(await later.isSignedIn)
        let profile = try await ProfileClient(configuration: live.configuration, network: Network(logger: live.log.logger)).fetch(
            using: later)
        #expect(profile.name == "Ada Lovelace")
        #expect(profile.email == "ada@sandbox.example")
        #expect(profile.profileURL?.absoluteString == "\(live.sandbox.baseURL)/in/ada")

        #expect(await later.signOut() == nil)
        #expect(try live.store.load(for: live.configuration.id) == nil)
        for secret in [outcome.token.accessToken, outcome.token.tokenSecret!, "sandbox-oauth1-secret"] {
            #expect(!live.log.text.contains(secret), "a secret reached the log")
        }
    }

    @Test func denyIsACancelAndKeepsTheSignInThere() async throws {
        let live = try await Live()
        let session = live.session()
        let first = try await session.signIn(using: FormPostingUserAgent()).token
        let error = await #expect(throws: OAuthError.self) { try await session.signIn(using: FormPostingUserAgent(action: "deny")) }
        #expect(error == .cancelled)
        #expect(try live.store.load(for: live.configuration.id) == first)
    }

    // MARK: What the provider refuses

    @Test func aWrongSecretIsASignatureTheProviderRefuses() async throws {
        let live = try await Live(["client_secret": "not-the-secret"])
        let error = await #expect(throws: OAuthError.self) { try await live.client().temporaryCredentials(callback: live.callback) }
        guard case .oauth1Problem("signature_invalid", _, .requestToken) = error else {
            Issue.record("expected signature_invalid, got \(String(describing: error))")
            return
        }
        #expect("\(error!)".contains("consumer secret"))
        #expect(!"\(error!)".contains("not-the-secret"))
    }

    @Test func aStaleTimestampIsRefusedWithAWordAboutTheClock() async throws {
        let live = try await Live()
        let error = await #expect(throws: OAuthError.self) {
            try await live.client(now: { Date().addingTimeInterval(-3600) }).temporaryCredentials(callback: live.callback)
        }
        guard case .oauth1Problem("timestamp_refused", _, _) = error else {
            Issue.record("expected timestamp_refused, got \(String(describing: error))")
            return
        }
        #expect("\(error!)".contains("clock"))
    }

    @Test func aReplayedRequestIsRefused() async throws {
        let live = try await Live()
        let url = try #require(URL(string: "\(live.sandbox.baseURL)/oauth1/echo?q=1"))
        let request = try live.client().signed(method: "GET", url: url, token: nil)
        let first = try await CurlTransport.shared.send(request)
        #expect(first.status == 200)
        let again = try await CurlTransport.shared.send(request)
        #expect(again.status == 401)
        #expect(
            throws: OAuthError.oauth1Problem("nonce_used", advice: "This nonce was used before with this timestamp.", endpoint: .resource)
        ) {
            _ = try OAuth1Client.fields(of: again, endpoint: .resource, secrets: [])
        }
    }

    @Test func aVerifierIsTradedOnce() async throws {
        let live = try await Live()
        let (authorization, verifier) = try await live.authorize()
        let token = try await live.client().tokenCredentials(for: authorization, verifier: verifier)
        #expect(token.tokenSecret != nil)
        let error = await #expect(throws: OAuthError.self) {
            try await live.client().tokenCredentials(for: authorization, verifier: verifier)
        }
        guard case .oauth1Problem("token_used", _, .token) = error else {
            Issue.record("expected token_used, got \(String(describing: error))")
            return
        }
    }

    @Test func aCallbackForAnotherRequestTokenIsNotOurs() async throws {
        let live = try await Live()
        let authorization = try await live.client().temporaryCredentials(callback: live.callback)
        let flow = OAuth1Flow(authorization: authorization)
        // From a listener anyone can reach: refused, and the flow waits on.
        let foreign = try #require(URL(string: "http://127.0.0.1:4000/callback?oauth_token=someone-elses&oauth_verifier=v"))
        #expect(!flow.resumeFromListener(with: foreign, method: "GET"))
        #expect(!flow.isFinished)
        // In the embedded view: the flow ends, and says why.
        #expect(flow.resume(with: foreign))
        await #expect(throws: OAuthError.stateMismatch) { try await flow.verifier() }

        // The provider, asked to trade another attempt's verifier with this attempt's token, refuses too.
        let (_, theirs) = try await live.authorize()
        let error = await #expect(throws: OAuthError.self) {
            try await live.client().tokenCredentials(for: authorization, verifier: theirs)
        }
        guard case .oauth1Problem("permission_unknown", _, .token) = error else {
            Issue.record("expected permission_unknown, got \(String(describing: error))")
            return
        }
    }

    @Test func aDeniedCallbackNamingOurTokenIsACancel() async throws {
        let live = try await Live()
        let authorization = try await live.client().temporaryCredentials(callback: live.callback)
        let flow = OAuth1Flow(authorization: authorization)
        try await FormPostingUserAgent(action: "deny").present(flow)
        await #expect(throws: OAuthError.cancelled) { try await flow.verifier() }
    }

    /// A refusal naming the clock or the signature leaves the sign-in; one naming the token ends it.
    @Test func onlyARejectedTokenEndsTheSignIn() async throws {
        let live = try await Live()
        let token = try await live.session().signIn(using: FormPostingUserAgent()).token
        var wrong = live.configuration
        wrong.clientSecret = "not-the-secret"
        let error = await #expect(throws: OAuthError.self) {
            try await ProfileClient(configuration: wrong, network: Network(logger: live.log.logger)).fetch(using: live.session(wrong))
        }
        guard case .oauth1Problem("signature_invalid", _, .profile) = error else {
            Issue.record("expected signature_invalid, got \(String(describing: error))")
            return
        }
        #expect(try live.store.load(for: live.configuration.id) == token)

        _ = try await HTTPClient().send(method: "DELETE", "\(live.sandbox.baseURL)/_admin/oauth1/tokens", headers: [:], body: nil)
        let session = live.session()
        let ended = await #expect(throws: OAuthError.self) {
            try await ProfileClient(configuration: live.configuration, network: Network(logger: live.log.logger)).fetch(using: session)
        }
        guard case .signedOut = ended else {
            Issue.record("expected signed out, got \(String(describing: ended))")
            return
        }
        #expect(try live.store.load(for: live.configuration.id) == nil)
    }

    // MARK: The client's base string and the sandbox's agree

    /// Random requests — names and values with reserved characters, `+`, `%`, unicode,
    /// empty ones, repeated names — in the query and a form body, signed by OAuthCore and
    /// read by the sandbox's own code. Each is accepted (so both computed one base string),
    /// and the sandbox's base string is the one OAuthCore makes of what the sandbox read.
    @Test func baseStringsAgreeForRandomRequests() async throws {
        let live = try await Live()
        var random = SeededGenerator(seed: UInt64(Date().timeIntervalSince1970))
        let seed = random.state
        let alphabet = Array("aZ09-._~ +%&=?/#[]@!$'()*,;:\"<>{}|^`éß€😀\u{3001}\u{0}\n")
        func text(_ count: Int) -> String { String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }) }
        func parameters() -> [(String, String)] {
            var list: [(String, String)] = []
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                let name =
                    Bool.random(using: &random) && !list.isEmpty
                    ? list.randomElement(using: &random)!.0 : text(Int.random(in: 0...6, using: &random))
                guard !name.hasPrefix("oauth_") else { continue }
                list.append((name, text(Int.random(in: 0...8, using: &random))))
            }
            return list
        }
        for round in 0..<40 {
            let (query, form) = (parameters(), parameters())
            // Spaces as `+` in some queries: §3.4.1.3.1 reads the query as a form.
            let plus = Bool.random(using: &random)
            let encodedQuery = query.map { pair in
                [pair.0, pair.1].map { OAuth1Signature.percentEncode($0).replacingOccurrences(of: "%20", with: plus ? "+" : "%20") }.joined(
                    separator: "=")
            }.joined(separator: "&")
            var components = try #require(URLComponents(string: "\(live.sandbox.baseURL)/oauth1/echo"))
            components.percentEncodedQuery = encodedQuery.isEmpty ? nil : encodedQuery
            let url = try #require(components.url)
            let method = form.isEmpty && Bool.random(using: &random) ? "GET" : "POST"
            let request = try live.client().signed(method: method, url: url, form: method == "POST" ? form : nil, token: nil)
            let answer = try await CurlTransport.shared.send(request)
            let context = "round \(round), seed \(seed): \(method) \(url.absoluteString) body \(form)"
            try #require(
                answer.status == 200, "the sandbox refused the signature: \(String(decoding: answer.body, as: UTF8.self)); \(context)")
            let echo = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
            let read = try #require(echo["parameters"] as? [[String]]).map { ($0[0], $0[1]) }
            let sent = query + (method == "POST" ? form : [])
            #expect(
                read.filter { !$0.0.hasPrefix("oauth_") }.map { "\($0.0)=\($0.1)" }.sorted() == sent.map { "\($0.0)=\($0.1)" }.sorted(),
                "\(context)")
            #expect(OAuth1Signature.baseString(method: method, url: url, parameters: read) == echo["base_string"] as? String, "\(context)")
        }
    }

    /// A refusal that names nothing: a provider whose clock is far off refuses every signature,
    /// so the token is kept and the clock named; with the clocks together, the sign-in is over.
    @Test func aBare401IsTheClockWhenTheClocksDisagree() async throws {
        let server = try await PythonServer.start(
            script: """
                import http.server
                class H(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        self.send_response_only(401)
                        self.send_header("Date", "Mon, 01 Jan 2001 00:00:00 GMT" if self.path.startswith("/skewed") else self.date_time_string())
                        self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", "2")
                        self.end_headers(); self.wfile.write(b"{}")
                    def log_message(self, *a): pass
                s = http.server.HTTPServer(("127.0.0.1", 0), H); print(s.server_port, flush=True); s.serve_forever()
                """, what: "a provider answering a bare 401")
        defer { server.stop() }
        let live = try await Live()
        let token = Token(accessToken: "access-token-1", tokenType: "OAuth1", tokenSecret: "token-secret-1")
        for (path, keeps) in [("skewed", true), ("in-step", false)] {
            var configuration = live.configuration
            configuration.userinfoEndpoint = URL(string: "http://127.0.0.1:\(server.port)/\(path)")
            let session = live.session(configuration)
            try await session.signIn(with: token)
            let error = await #expect(throws: OAuthError.self) {
                try await ProfileClient(configuration: configuration, network: Network(logger: live.log.logger)).fetch(using: session)
            }
            if keeps {
                guard case .clockOff(let seconds) = error, seconds < -86_400 else {
                    Issue.record("expected the clock, got \(String(describing: error))")
                    continue
                }
                #expect("\(error!)".contains("behind this computer's"))
                #expect(try live.store.load(for: configuration.id)?.accessToken == "access-token-1")
            } else {
                guard case .signedOut = error else {
                    Issue.record("expected signed out, got \(String(describing: error))")
                    continue
                }
                #expect(try live.store.load(for: configuration.id) == nil)
            }
        }
    }

    @Test func aProviderThatDoesNotConfirmTheCallbackIsRefused() async throws {
        let answer = HTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain"], body: Data("oauth_token=t&oauth_token_secret=s".utf8))
        let fields = try OAuth1Client.fields(of: answer, endpoint: .requestToken, secrets: [])
        #expect(fields["oauth_callback_confirmed"] == nil)
        // Through the client, against a server that answers so: a Python one line.
        let server = try await PythonServer.start(
            script: """
                import http.server, sys
                class H(http.server.BaseHTTPRequestHandler):
                    def do_POST(self):
                        body = b"oauth_token=t&oauth_token_secret=s"
                        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
                    def log_message(self, *a): pass
                s = http.server.HTTPServer(("127.0.0.1", 0), H); print(s.server_port, flush=True); s.serve_forever()
                """, what: "an OAuth 1.0 (not 1.0a) provider")
        defer { server.stop() }
        var configuration = try Live.configuration(issuer: "http://127.0.0.1:\(server.port)")
        configuration.clientSecret = "s"
        let client = OAuth1Client(configuration: configuration, network: Network(timeout: 10))
        let callback = try #require(URL(string: "http://127.0.0.1/callback"))
        await #expect(throws: OAuthError.oauth1CallbackNotConfirmed) { try await client.temporaryCredentials(callback: callback) }
    }
}

extension OAuth1SandboxTests.Live {
    /// The preset pointed at another server, for a provider that is not the sandbox.
    static func configuration(issuer: String) throws -> ProviderConfiguration {
        try ProviderCatalog(
            presetDirectories: [Fixtures.presetDirectory], userConfigDirectory: URL(fileURLWithPath: "/nonexistent"), environment: [:]
        ).configuration(named: "sandbox-oauth1", overrides: ["issuer": issuer])
    }
}

/// SplitMix64: a seeded generator, so a failing round can be run again.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
