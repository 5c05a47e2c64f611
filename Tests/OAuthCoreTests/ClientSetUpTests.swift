import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// What the set-up dialog rests on: client secrets kept apart from the
/// configuration, providers added from a file or an issuer's discovery document.
@Suite struct ClientSetUpTests {
    private func mode(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func fileSecretsArePrivateAndRoundTrip() throws {
        let home = try TemporaryDirectory()
        let store = FileClientSecretStore(directory: home.url.appendingPathComponent("state/client-secrets"))
        #expect(try store.load(for: "github") == nil)
        try store.save("s3cret value", for: "github")
        #expect(try store.load(for: "github") == "s3cret value")
        #expect(try mode(store.directory.appendingPathComponent("github")) == 0o600)
        #expect(try mode(store.directory) == 0o700)
        try store.save("replaced", for: "github")
        #expect(try store.load(for: "github") == "replaced")
        try store.remove(for: "github")
        try store.remove(for: "github")
        #expect(try store.load(for: "github") == nil)
        #expect(throws: OAuthError.self) { try store.save("x", for: "../escape") }
    }

    @Test func theKeyringIsPreferredAndHoldsTheOnlyCopy() async throws {
        let home = try TemporaryDirectory()
        // The preferred store here is a second directory: any store behind the protocol will do.
        let preferred = FileClientSecretStore(directory: home.url.appendingPathComponent("keyring"))
        let file = FileClientSecretStore(directory: home.url.appendingPathComponent("file"))
        let running = Flag()
        let store = FallbackClientSecretStore(preferred: preferred, fallback: file, preferredIsAvailable: { running.value })

        // No keyring: the private file.
        #expect(try await store.save("one", for: "gitlab") == file.displayName)
        #expect(try file.load(for: "gitlab") == "one")
        #expect(try await store.load(for: "gitlab") == "one")

        // A keyring appears: the file's copy still serves until a save moves it.
        running.value = true
        #expect(try await store.load(for: "gitlab") == "one")
        #expect(try await store.save("two", for: "gitlab") == preferred.displayName)
        #expect(try preferred.load(for: "gitlab") == "two")
        #expect(try file.load(for: "gitlab") == nil, "one place holds the secret")
        #expect(try await store.load(for: "gitlab") == "two")

        try await store.remove(for: "gitlab")
        #expect(try await store.load(for: "gitlab") == nil)
    }

    static let acme = """
        {"id": "acme", "display_name": "Acme", "issuer": "https://id.acme.example",
         "authorization_endpoint": "/authorize", "token_endpoint": "/token",
         "client_id": "acme-desktop", "client_secret": "acme-secret", "client_authentication": "client_secret_basic",
         "redirect_uri": "http://127.0.0.1/callback", "scopes": ["openid"]}
        """

    @Test func anAddedProviderIsWrittenWithoutItsSecret() throws {
        let home = try TemporaryDirectory()
        let catalog = Fixtures.catalog(userDirectory: home.url.appendingPathComponent("config"))
        let added = try catalog.addProvider(from: Data(Self.acme.utf8), name: "acme.json")
        #expect(added.id == "acme" && added.clientSecret == "acme-secret")
        let written = catalog.userFile(for: "acme")
        let text = try String(contentsOf: written, encoding: .utf8)
        #expect(!text.contains("acme-secret"))
        #expect(try mode(written) == 0o600)
        #expect(catalog.availableProviders.contains { $0.id == "acme" && $0.displayName == "Acme" })

        // Without its secret it is a draft that lacks one, until the store's is filled in.
        var draft = try catalog.draft(named: "acme")
        #expect(draft.lacksClientSecret)
        #expect(throws: OAuthError.self) { try catalog.validated(draft) }
        draft.clientSecret = "acme-secret"
        #expect(try catalog.validated(draft).tokenEndpoint.absoluteString == "https://id.acme.example/token")
    }

    @Test func anAddedProviderThatCouldNeverBeUsedIsRefusedWithNothingWritten() throws {
        let home = try TemporaryDirectory()
        let catalog = Fixtures.catalog(userDirectory: home.url.appendingPathComponent("config"))
        let file = Self.acme
        _ = try catalog.addProvider(from: Data(file.utf8), name: "acme.json")
        // The same id again, a preset's id, a secret for a public client, a file of the wrong shape: refused, nothing written.
        let refusals: [(String, String)] = [
            (file, "already"),
            (#"{"id": "github", "authorization_endpoint": "https://a.example/a", "token_endpoint": "https://a.example/t"}"#, "already"),
            (
                #"{"id": "pub", "issuer": "https://p.example", "authorization_endpoint": "/a", "token_endpoint": "/t", "client_secret": "s", "client_authentication": "none"}"#,
                "public client"
            ),
            (
                #"{"id": "shape", "issuer": "https://p.example", "authorization_endpoint": "/a", "token_endpoint": "/t", "redirect_uri": "http://127.0.0.1/callback", "scopes": "openid"}"#,
                "scopes"
            ),
            (#"{"id": "../x"}"#, "id"),
            // Ids that would share GitHub's credential variables, or a name already shown.
            (
                #"{"id": "GitHub", "authorization_endpoint": "https://github.com/login/oauth/authorize", "token_endpoint": "https://evil.example/t", "redirect_uri": "http://127.0.0.1/callback"}"#,
                "“github” already"
            ),
            (
                #"{"id": "ACME", "authorization_endpoint": "https://a.example/a", "token_endpoint": "https://a.example/t", "redirect_uri": "http://127.0.0.1/callback"}"#,
                "“acme” already"
            ),
            (
                #"{"id": "hub2", "display_name": "github", "authorization_endpoint": "https://a.example/a", "token_endpoint": "https://a.example/t", "redirect_uri": "http://127.0.0.1/callback"}"#,
                "shown as “GitHub”"
            ),
            // A provider that could never be used: its token endpoint in clear text.
            (
                #"{"id": "clear", "authorization_endpoint": "https://a.example/a", "token_endpoint": "http://a.example/t", "redirect_uri": "http://127.0.0.1/callback"}"#,
                "https"
            ),
            ("[1]", "JSON object"),
        ]
        for (text, said) in refusals {
            let error = #expect(throws: OAuthError.self) { try catalog.addProvider(from: Data(text.utf8), name: "p.json") }
            #expect(String(describing: error!).contains(said), "\(text): \(error!)")
        }
        for id in ["pub", "shape", "x", "GitHub", "ACME", "hub2", "clear"] {
            #expect(!FileManager.default.fileExists(atPath: catalog.userFile(for: id).path))
        }
    }

    @Test func anIssuerIsDiscoveredIntoAProviderThatSignsIn() async throws {
        let sandbox = try await RunningSandbox.start()
        let home = try TemporaryDirectory()
        let catalog = Fixtures.catalog(userDirectory: home.url.appendingPathComponent("config"))
        // An issuer is compared octet for octet (RFC 8414 §3.3): a slash more is another issuer.
        let slashed = await #expect(throws: OAuthError.self) { try await ProviderDiscovery.providerFile(issuer: sandbox.baseURL + "/") }
        #expect(String(describing: slashed!).contains("compared exactly"), "\(slashed!)")
        let object = try await ProviderDiscovery.providerFile(issuer: sandbox.baseURL)
        #expect(object.tokenEndpoint.value == sandbox.baseURL + "/token")
        #expect(object.pkce.value == true)
        let added = try catalog.addProvider(from: object.data, name: sandbox.baseURL)
        #expect(added.clientSecret == nil)
        try catalog.updateUserFile(for: added.id) { $0.clientID = .value("latchkey-desktop") }
        let configuration = try catalog.configuration(named: added.id)
        #expect(configuration.clientAuthentication == .none && configuration.usableUserAgents == [.embedded, .browser])
        #expect(configuration.issuer?.absoluteString == sandbox.baseURL)

        // A URL beside the issuer is named as such, not as a server's failure.
        let beside = await #expect(throws: OAuthError.self) { try await ProviderDiscovery.providerFile(issuer: sandbox.baseURL + "/nope") }
        #expect(String(describing: beside!).contains("Check that it is the provider's issuer URL"), "\(beside!)")

        // Signed in with it, through the sandbox's page, as a browser would.
        let log = CapturedLog()
        let session = AuthSession(configuration: configuration, store: MemoryTokenStore(), logger: log.logger)
        _ = try await session.signIn(using: FormPostingUserAgent())
        #expect(await session.isSignedIn)
    }

    @Test func aDiscoveryDocumentIsCheckedBeforeItIsBelieved() throws {
        let issuer = "https://id.example"
        let good: [String: Any] = [
            "issuer": issuer, "authorization_endpoint": "https://id.example/auth", "token_endpoint": "https://id.example/token",
        ]
        let file = try ProviderDiscovery.providerFile(issuer: issuer, document: json(good))
        // A public client sends PKCE unless the document lists methods without S256.
        #expect(file.id.value == "id-example" && file.pkce.value == true)
        var plainOnly = good
        plainOnly["code_challenge_methods_supported"] = ["plain"]
        #expect(try ProviderDiscovery.providerFile(issuer: issuer, document: json(plainOnly)).pkce.value == false)
        // Two realms on one host are two providers.
        let realm = try ProviderDiscovery.providerFile(
            issuer: "https://id.example/realms/staff",
            document: json(good.merging(["issuer": "https://id.example/realms/staff"]) { $1 }))
        #expect(realm.id.value == "id-example-realms-staff")
        #expect(file.scopes.value == ["openid", "profile", "email", "offline_access"].filter { $0 != "offline_access" })

        var other = good
        other["issuer"] = "https://evil.example"
        var clear = good
        clear["token_endpoint"] = "http://id.example/token"
        var missing = good
        missing["token_endpoint"] = nil
        // A remote provider may not send codes to a port on this computer, where anyone may listen.
        var local = good
        local["token_endpoint"] = "http://127.0.0.1:8080/token"
        for (document, said) in [(other, "another issuer"), (clear, "https"), (missing, "no token_endpoint"), (local, "https")] {
            let error = #expect(throws: OAuthError.self) {
                try ProviderDiscovery.providerFile(issuer: issuer, document: json(document))
            }
            #expect(String(describing: error!).contains(said), "\(error!)")
        }
    }

    @Test func anIssuerThatIsNotAnIssuerIsRefusedBeforeAnyRequest() async throws {
        for text in ["http://id.example", "id.example", "https://id.example/?x=1", "ftp://id.example"] {
            let error = await #expect(throws: OAuthError.self) { try await ProviderDiscovery.providerFile(issuer: text) }
            #expect(String(describing: error!).contains("is not an issuer URL"), "\(text): \(error!)")
        }
    }

    @Test func aDiscoveryAnswerThatIsAWebPageIsNamedSo() async throws {
        let server = try await PythonServer.start(script: Self.htmlServer, what: "the HTML server")
        defer { server.stop() }
        let error = await #expect(throws: OAuthError.self) {
            try await ProviderDiscovery.providerFile(issuer: "http://127.0.0.1:\(server.port)")
        }
        #expect(error == .htmlInsteadOfJSON(endpoint: .discovery))
    }

    /// Answers every GET with a login page, as a captive portal does.
    static let htmlServer = """
        import http.server, sys
        class Portal(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<html><body>Log in to the Wi-Fi</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Portal)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
}

/// A value a test flips while a store reads it from another task.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = false
    var value: Bool {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// A provider file must be a regular file: a pipe or a device typed by mistake
/// (or `--provider-file /dev/stdin`) is refused with the same sentence.
@Suite struct ProviderFileKindTests {
    @Test func onlyARegularFileIsReadAsAProviderFile() throws {
        let home = try TemporaryDirectory()
        let fifo = home.url.appendingPathComponent("provider.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let catalog = Fixtures.catalog(userDirectory: home.url.appendingPathComponent("config"))
        for file in [fifo, URL(fileURLWithPath: "/dev/zero")] {
            for attempt in [{ _ = try catalog.configuration(file: file) }, { _ = try catalog.addProvider(file: file) }] {
                let error = #expect(throws: OAuthError.self) { try attempt() }
                #expect(String(describing: error!).contains("cannot read \(file.path) as a provider file"), "\(error!)")
            }
        }
    }
}
