import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// From a protected URL to a token it accepts: RFC 9728 → RFC 8414 → RFC 7591 → RFC 8707,
/// against the real sandbox, and the checks on each document before it is believed.
@Suite struct ResourceSignInTests {
    typealias Setting = ZeroConfigurationHome

    func statistics(_ sandbox: RunningSandbox) async throws -> [String: Any] {
        try await HTTPClient().get(sandbox.baseURL + "/_admin/stats").json
    }

    /// Where the server takes client metadata documents and one is configured, its URL is
    /// the client id: nothing is registered, and the sign-in works for the resource.
    @Test func aClientMetadataDocumentStandsInForRegistration() async throws {
        let sandbox = try await RunningSandbox.start()
        let documents = try await ClientMetadataServer()
        let setting = try Setting()
        let document = try #require(URL(string: documents.url()))
        let providers = ZeroConfiguration(
            catalog: setting.catalog, secrets: setting.secrets, clientName: "Latchkey", clientIDMetadataDocument: document)
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))

        let outcome = try await providers.configuration(for: me)
        #expect(!outcome.registered)
        #expect(outcome.configuration.clientID == document.absoluteString && outcome.configuration.clientAuthentication == .none)
        let file = try ProviderCatalog.readFile(setting.catalog.userFile(for: try ZeroConfiguration.id(for: me)))
        #expect(file.registrationClientURI == .unset && file.registrationEndpoint == .unset)
        let session = AuthSession(configuration: outcome.configuration, store: MemoryTokenStore())
        _ = try await session.signIn(using: FormPostingUserAgent())
        let token = try await session.freshToken()
        #expect(try await HTTPClient().get(me.absoluteString, headers: ["Authorization": "Bearer \(token.accessToken)"]).status == 200)

        // By its issuer too; and a URL that is no place for a document is a sentence, not a client id.
        #expect(try await providers.prepare(issuer: sandbox.baseURL).registered == false)
        #expect(try setting.catalog.draft(named: try ZeroConfiguration.id(forIssuer: sandbox.baseURL)).clientID == document.absoluteString)
        let counted = try await statistics(sandbox)
        #expect(counted["registrations"] as? Int == 0)
        let plain = ZeroConfiguration(
            catalog: setting.catalog, secrets: setting.secrets, clientName: "Latchkey",
            clientIDMetadataDocument: URL(string: "http://198.51.100.7/latchkey.json"))
        let error = await #expect(throws: OAuthError.self) {
            try await plain.configuration(for: URL(string: sandbox.baseURL + "/api/notes")!)
        }
        #expect("\(error!)".contains("client metadata document's URL must be https://"))
    }

    @Test func aURLAloneSignsInAndGetsATokenTheResourceAccepts() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try Setting()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))

        let first = try await setting.providers.configuration(for: me)
        #expect(first.registered)
        let configuration = first.configuration
        #expect(configuration.clientID.hasPrefix("sbx_client_"))
        #expect(configuration.clientAuthentication == .none && configuration.usePKCE)
        #expect(configuration.resource == me)
        #expect(configuration.scopes == ["openid", "profile", "offline_access"])
        // The resource's own name, with where it is: it cannot pass itself off as another.
        #expect(configuration.displayName == "Who am I (\(me.host!):\(me.port!))")
        #expect(configuration.usableUserAgents == [.embedded, .browser])

        let session = AuthSession(configuration: configuration, store: MemoryTokenStore())
        _ = try await session.signIn(using: FormPostingUserAgent())
        let token = try await session.freshToken()
        let answer = try await HTTPClient().get(me.absoluteString, headers: ["Authorization": "Bearer \(token.accessToken)"])
        #expect(answer.status == 200)
        #expect(answer.json["username"] as? String == "ada")
        // Meant for /api/me, it is no good at the resource beside it.
        let notes = try await HTTPClient().get(sandbox.baseURL + "/api/notes", headers: ["Authorization": "Bearer \(token.accessToken)"])
        #expect(notes.status == 401)
        // A refreshed token keeps its audience.
        let renewed = try await session.replacement(forRejected: token)
        #expect(renewed.accessToken != token.accessToken)
        #expect(try await HTTPClient().get(me.absoluteString, headers: ["Authorization": "Bearer \(renewed.accessToken)"]).status == 200)

        // Again, twice: the saved registration, read back with the server (which hands out a new
        // registration access token at each read, as Keycloak does), not a second registration.
        let id = try ZeroConfiguration.id(for: me)
        let firstToken = try setting.secrets.load(for: ZeroConfiguration.registrationKey(id))
        for _ in 0..<2 {
            let again = try await setting.providers.configuration(for: me)
            #expect(!again.registered)
            #expect(again.configuration.clientID == configuration.clientID)
        }
        #expect(try setting.secrets.load(for: ZeroConfiguration.registrationKey(id)) != firstToken)
        #expect(try await statistics(sandbox)["registrations"] as? Int == 1)

        // The registration access token is in the secret store, and nowhere else.
        let registrationToken = try #require(try setting.secrets.load(for: ZeroConfiguration.registrationKey(id)))
        let file = try String(contentsOf: setting.catalog.userFile(for: id), encoding: .utf8)
        #expect(!file.contains(registrationToken))
        #expect(file.contains(configuration.clientID))
    }

    @Test func aServerThatForgotTheClientIsRegisteredWithAgain() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try Setting()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let first = try await setting.providers.configuration(for: me).configuration.clientID
        #expect(try await HTTPClient().send(method: "DELETE", sandbox.baseURL + "/_admin/clients", headers: [:], body: nil).status == 204)

        let second = try await setting.providers.configuration(for: me)
        #expect(second.registered)
        #expect(second.configuration.clientID != first)
        #expect(try await statistics(sandbox)["registrations"] as? Int == 2)
        // The new client signs in.
        let session = AuthSession(configuration: second.configuration, store: MemoryTokenStore())
        _ = try await session.signIn(using: FormPostingUserAgent())
        #expect(await session.isSignedIn)
    }

    @Test func aServerWithoutRegistrationLeavesAProviderThatNeedsOnlyAClientID() async throws {
        // GitLab's likeness: discovery, public clients, no registration endpoint.
        let sandbox = try await RunningSandbox.start(["--behave-like", "gitlab"])
        let setting = try Setting()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let error = await #expect(throws: OAuthError.self) { try await setting.providers.configuration(for: me) }
        let id = try ZeroConfiguration.id(for: me)
        #expect("\(error!)".contains("does not let apps register themselves"))
        #expect("\(error!)".contains(setting.catalog.userFile(for: id).path))

        try setting.catalog.updateUserFile(for: id) { $0.clientID = .value("latchkey-desktop") }
        let outcome = try await setting.providers.configuration(for: me)
        #expect(!outcome.registered)
        #expect(outcome.configuration.clientID == "latchkey-desktop")
        let session = AuthSession(configuration: outcome.configuration, store: MemoryTokenStore())
        _ = try await session.signIn(using: FormPostingUserAgent())
        let token = try await session.freshToken()
        #expect(try await HTTPClient().get(me.absoluteString, headers: ["Authorization": "Bearer \(token.accessToken)"]).status == 200)
    }

    @Test func aURLThatNeedsNoTokenOrIsNotThereIsSaidSo() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try Setting()
        // The discovery document answers 200 to anyone: nothing to sign in for.
        let open = await #expect(throws: OAuthError.self) {
            try await setting.providers.configuration(for: URL(string: sandbox.baseURL + "/.well-known/openid-configuration")!)
        }
        #expect("\(open!)".contains("without asking for a sign-in"), "\(open!)")
        let missing = await #expect(throws: OAuthError.self) {
            try await setting.providers.configuration(for: URL(string: sandbox.baseURL + "/api/nothing")!)
        }
        #expect("\(missing!)".contains("does not say where to sign in"), "\(missing!)")
        // Nothing was kept for either.
        #expect(try setting.everythingWritten().isEmpty)
    }

    @Test func aResourceOffHTTPSIsRefusedBeforeAnyRequest() async throws {
        let setting = try Setting()
        for text in ["http://api.example/me", "ftp://api.example/me", "https://api.example/me#top", "https://user:pw@api.example/me"] {
            await #expect(throws: OAuthError.self, "\(text)") { try await setting.providers.configuration(for: URL(string: text)!) }
        }
    }

    // MARK: The documents, checked before they are believed

    static let identifier = URL(string: "https://api.example/mcp")!

    @Test func resourceMetadataMustNameTheResourceItWasAskedAbout() throws {
        let good: [String: Any] = [
            "resource": "https://api.example/mcp", "authorization_servers": ["https://id.example"],
            "scopes_supported": ["files:read"],
        ]
        let read = try ResourceDiscovery.metadata(from: json(good), for: Self.identifier, challengeScopes: nil)
        #expect(read.authorizationServers == [URL(string: "https://id.example")!])
        #expect(read.scopes == ["files:read"])
        // The challenge's scope is what the resource wants now; it wins over the list.
        #expect(try ResourceDiscovery.metadata(from: json(good), for: Self.identifier, challengeScopes: ["a", "b"]).scopes == ["a", "b"])
        // Case in the host and a default port do not make another resource.
        #expect(throws: Never.self) {
            try ResourceDiscovery.metadata(
                from: json(good.merging(["resource": "https://API.example:443/mcp"]) { $1 }), for: Self.identifier, challengeScopes: nil)
        }

        let bad: [(String, [String: Any])] = [
            ("another resource", good.merging(["resource": "https://evil.example/mcp"]) { $1 }),
            ("another path", good.merging(["resource": "https://api.example/mcp/"]) { $1 }),
            ("no resource", good.filter { $0.key != "resource" }),
            ("no servers", good.merging(["authorization_servers": [String]()]) { $1 }),
            ("servers not a list", good.merging(["authorization_servers": "https://id.example"]) { $1 }),
            ("http server", good.merging(["authorization_servers": ["http://id.example"]]) { $1 }),
            ("loopback server for a remote resource", good.merging(["authorization_servers": ["http://127.0.0.1:9/"]]) { $1 }),
        ]
        for (name, document) in bad {
            #expect(throws: OAuthError.self, "\(name)") {
                try ResourceDiscovery.metadata(from: json(document), for: Self.identifier, challengeScopes: nil)
            }
        }
    }

    @Test func wellKnownLocationsInsertTheSuffixBeforeThePath() {
        #expect(
            ResourceDiscovery.wellKnownLocation(of: URL(string: "https://api.example/v1/mcp")!).absoluteString
                == "https://api.example/.well-known/oauth-protected-resource/v1/mcp")
        #expect(
            ResourceDiscovery.wellKnownLocation(of: URL(string: "https://api.example/")!).absoluteString
                == "https://api.example/.well-known/oauth-protected-resource")
        #expect(
            ResourceDiscovery.wellKnownLocation(of: URL(string: "https://api.example/v1?tenant=7")!).absoluteString
                == "https://api.example/.well-known/oauth-protected-resource/v1?tenant=7")
        // The MCP authorization specification's order (2026-07-28, Authorization Server Metadata Discovery).
        #expect(
            ProviderDiscovery.wellKnownLocations(of: URL(string: "https://id.example")!).map(\.absoluteString) == [
                "https://id.example/.well-known/oauth-authorization-server",
                "https://id.example/.well-known/openid-configuration",
            ])
        #expect(
            ProviderDiscovery.wellKnownLocations(of: URL(string: "https://id.example:8443/tenant/1")!).map(\.absoluteString) == [
                "https://id.example:8443/.well-known/oauth-authorization-server/tenant/1",
                "https://id.example:8443/.well-known/openid-configuration/tenant/1",
                "https://id.example:8443/tenant/1/.well-known/openid-configuration",
            ])
    }

    @Test func aRegistrationAnswerIsCheckedBeforeItIsKept() throws {
        let asked = [URL(string: "http://127.0.0.1/callback")!]
        let endpoint = URL(string: "https://id.example/register")!
        let good: [String: Any] = [
            "client_id": "c1", "token_endpoint_auth_method": "none", "redirect_uris": ["http://127.0.0.1/callback"],
            "registration_access_token": "rat", "registration_client_uri": "https://id.example/register/c1",
        ]
        let registration = try DynamicRegistration.registration(from: json(good), asked: asked, endpoint: endpoint)
        #expect(registration.clientID == "c1" && registration.authentication == .none && registration.clientSecret == nil)
        #expect(!"\(registration)".contains("rat"))
        // A server that made the client confidential gives the secret to use.
        let confidential = try DynamicRegistration.registration(
            from: json(good.merging(["token_endpoint_auth_method": "client_secret_basic", "client_secret": "s"]) { $1 }), asked: asked,
            endpoint: endpoint)
        #expect(confidential.authentication == .clientSecretBasic && confidential.clientSecret == "s")
        // A secret with no method named: RFC 7591 §2's default, client_secret_basic.
        let unsaid = try DynamicRegistration.registration(
            from: json(good.filter { $0.key != "token_endpoint_auth_method" }.merging(["client_secret": "s"]) { $1 }), asked: asked,
            endpoint: endpoint)
        #expect(unsaid.authentication == .clientSecretBasic)
        // The registration's own URI must be where the registration was made: its access token goes there.
        for elsewhere in ["https://evil.example/register/c1", "http://127.0.0.1:9/steal", "http://id.example/register/c1"] {
            let moved = try DynamicRegistration.registration(
                from: json(good.merging(["registration_client_uri": elsewhere]) { $1 }), asked: asked, endpoint: endpoint)
            #expect(moved.registrationClientURI == nil, "\(elsewhere)")
        }

        let bad: [(String, [String: Any])] = [
            ("no client id", good.filter { $0.key != "client_id" }),
            ("empty client id", good.merging(["client_id": ""]) { $1 }),
            ("private_key_jwt", good.merging(["token_endpoint_auth_method": "private_key_jwt"]) { $1 }),
            ("confidential without a secret", good.merging(["token_endpoint_auth_method": "client_secret_post"]) { $1 }),
            ("another redirect URI", good.merging(["redirect_uris": ["https://elsewhere.example/cb"]]) { $1 }),
        ]
        for (name, answer) in bad {
            #expect(throws: OAuthError.self, "\(name)") {
                try DynamicRegistration.registration(from: json(answer), asked: asked, endpoint: endpoint)
            }
        }
    }

    @Test func aRefusedRegistrationIsASentenceWithTheServersReason() async throws {
        let sandbox = try await RunningSandbox.start()
        // The sandbox refuses plain http to another host, as RFC 8252 asks.
        let error = await #expect(throws: OAuthError.self) {
            try await DynamicRegistration.register(
                at: URL(string: sandbox.baseURL + "/register")!, redirectURIs: [URL(string: "http://example.com/cb")!],
                clientName: "Latchkey")
        }
        #expect("\(error!)".contains("refused to register Latchkey"), "\(error!)")
        #expect("\(error!)".contains("invalid_redirect_uri"), "\(error!)")
    }
}
