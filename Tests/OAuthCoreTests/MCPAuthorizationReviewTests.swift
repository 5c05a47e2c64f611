import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// The MCP authorization work, after an attacker's review.
extension MCPAuthorizationTests {
    /// A challenge a script hands on is not trusted to say where the resource's metadata is: one
    /// naming a document elsewhere that claims another server does not end the sign-in (it was
    /// revoked and forgotten before).
    @Test func aForgedChallengeDoesNotEndTheSignIn() async throws {
        let setting = try await Setting([])
        let store = MemoryTokenStore()
        let me = setting.url("/api/me")
        let configuration = try await setting.providers.configuration(for: me).configuration
        _ = try await AuthSession(configuration: configuration, store: store).signIn(using: FormPostingUserAgent())
        let forger = try await PythonServer.start(
            script: """
                import http.server, json, sys
                class H(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        body = json.dumps({"resource": sys.argv[1], "authorization_servers": ["https://mix-up.invalid"]}).encode()
                        self.send_response(200); self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
                    def log_message(self, *a): pass
                s = http.server.HTTPServer(("127.0.0.1", 0), H); print(s.server_port, flush=True); s.serve_forever()
                """, arguments: [me.absoluteString], what: "a forged metadata document")
        defer { forger.stop() }
        let header = #"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:\#(forger.port)/prm""#
        let answer = try await setting.providers.answer(try ResourceChallenge(header: header), for: me, tokens: store, records: nil)
        guard case .renewed = answer else {
            Issue.record("expected a renewal at the same server, got \(answer)")
            return
        }
        #expect(try store.load(for: configuration.id) != nil)
        #expect(try await setting.statistics()["revocation_requests"] as? Int == 0)
        #expect(try setting.catalog.draft(named: configuration.id).issuer?.absoluteString == setting.sandbox.baseURL)
    }

    /// A move that cannot be completed (the new server refuses the registration) loses nothing:
    /// the old sign-in is still kept and not revoked, and the provider still names the old server.
    @Test func aMoveThatCannotBeCompletedLosesNothing() async throws {
        let setting = try await Setting([])
        let store = MemoryTokenStore()
        let me = setting.url("/api/me")
        let configuration = try await setting.providers.configuration(for: me).configuration
        let token = try await AuthSession(configuration: configuration, store: store).signIn(using: FormPostingUserAgent()).token
        _ = try await HTTPClient().send(method: "POST", setting.sandbox.baseURL + "/_admin/move-resources", headers: [:], body: nil)
        // The same providers, asking the new server for a redirect URI it refuses (not loopback, not https).
        let refused = setting.local.providers(redirectURI: URL(string: "http://app.example/callback")!)
        let (_, header) = try await Self.answer(setting, "/api/me", token)
        await #expect(throws: OAuthError.self) {
            _ = try await refused.answer(try ResourceChallenge(header: try #require(header)), for: me, tokens: store, records: nil)
        }
        #expect(try store.load(for: configuration.id) == token, "the old sign-in is kept")
        #expect(try await setting.statistics()["revocation_requests"] as? Int == 0, "and not revoked")
        #expect(try setting.catalog.draft(named: configuration.id).issuer?.absoluteString == setting.sandbox.baseURL)
    }

    /// Scopes a server asks for end up on a consent page and in the provider file: names only, and not too many.
    @Test func aChallengeAskingForOddOrEndlessScopesIsRefused() throws {
        #expect(throws: OAuthError.self) { try ResourceChallenge(header: #"Bearer error="insufficient_scope", scope="read wr\"ite""#) }
        #expect(throws: OAuthError.self) { try ResourceChallenge(header: "Bearer error=\"insufficient_scope\", scope=\"read \u{7F}\"") }
        let many = (1...40).map { "s\($0)" }.joined(separator: " ")
        #expect(throws: OAuthError.self) { try ResourceChallenge(header: #"Bearer error="insufficient_scope", scope="\#(many)""#) }
        #expect(
            try ResourceChallenge(header: #"Bearer error="insufficient_scope", scope="mcp:read files:write""#).scopes == [
                "mcp:read", "files:write",
            ])
    }

    /// A server asking for a new scope each time is not followed for ever either.
    @Test func aServerAskingForANewScopeEachTimeIsStoppedToo() throws {
        let home = try TemporaryDirectory()
        let records = ChallengeRecords(directory: home.url)
        for round in 1...6 { try records.note(provider: "p", scopes: ["s\(round)"], resource: "https://api.example") }
        #expect(throws: OAuthError.self) { try records.note(provider: "p", scopes: ["s7"], resource: "https://api.example") }
    }

    /// A provider file written before issuers were compared exactly holds its issuer without the
    /// trailing slash its server names itself with: it is kept as the server names it, then works.
    @Test func anIssuerKeptWithoutItsTrailingSlashIsMendedOnce() async throws {
        let setting = try await Setting(["--issuer-path", "/"])
        _ = try setting.home.write(
            #"{"issuer": "\#(setting.sandbox.baseURL)", "origin": "issuer", "client_id": "latchkey-desktop"}"#,
            to: "config/old.json")
        try await setting.catalog.refreshDiscovery(named: "old")
        #expect(try setting.catalog.draft(named: "old").issuer?.absoluteString == setting.sandbox.baseURL + "/")
        // A file of the person's own is left as they wrote it: the refusal stands.
        _ = try setting.home.write(#"{"issuer": "\#(setting.sandbox.baseURL)", "client_id": "x"}"#, to: "config/mine.json")
        await #expect(throws: OAuthError.self) { try await setting.catalog.refreshDiscovery(named: "mine") }
    }
}
