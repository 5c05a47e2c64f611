import Foundation
import TestSupport
import Testing

/// RFC 7591 registration, RFC 9728 protected resources and RFC 8707 audiences, over plain HTTP.
@Suite struct RegistrationAndResourceTests {
    let sandbox: RunningSandbox
    let browser: Browser
    var http: HTTPClient { browser.http }

    init() async throws {
        sandbox = try await RunningSandbox.start()
        browser = Browser(sandbox: sandbox)
    }

    func register(_ metadata: [String: any Sendable]) async throws -> Reply {
        try await http.send(
            method: "POST", "\(sandbox.baseURL)/register", headers: ["Content-Type": "application/json"],
            body: try JSONSerialization.data(withJSONObject: metadata))
    }

    static var native: [String: any Sendable] {
        [
            "client_name": "Latchkey", "application_type": "native", "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "redirect_uris": [Clients.loopback],
        ]
    }

    /// Code → tokens for `client`, with `resource` in both requests when given.
    func tokens(client: String, resource: String?, tokenResource: String?? = nil, scope: String = "openid profile") async throws -> Reply {
        let pkce = PKCE()
        var parameters = Browser.parameters(client: client, redirectURI: Clients.loopback, scope: scope, pkce: pkce)
        if let resource { parameters.append(("resource", resource)) }
        let code = try await browser.code(parameters)
        var fields = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.loopback), ("client_id", client),
            ("code_verifier", pkce.verifier),
        ]
        if let sent = tokenResource ?? resource { fields.append(("resource", sent)) }
        return try await http.postForm("\(sandbox.baseURL)/token", fields)
    }

    @Test func discoveryNamesTheRegistrationEndpointInBothWellKnownDocuments() async throws {
        for path in ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"] {
            let document = try await http.get(sandbox.baseURL + path).json
            #expect(document["registration_endpoint"] as? String == "\(sandbox.baseURL)/register", "\(path)")
        }
    }

    @Test func aNativePublicClientRegistersSignsInAndReadsItsRegistrationBack() async throws {
        let reply = try await register(Self.native)
        #expect(reply.status == 201)
        #expect(reply.header("cache-control") == "no-store")
        let clientID = try #require(reply.json["client_id"] as? String)
        #expect(reply.json["client_secret"] == nil)
        #expect(reply.json["token_endpoint_auth_method"] as? String == "none")
        #expect(reply.json["redirect_uris"] as? [String] == [Clients.loopback])
        let accessToken = try #require(reply.json["registration_access_token"] as? String)
        let clientURI = try #require(reply.json["registration_client_uri"] as? String)

        // The registered client signs in like a configured one, on any loopback port.
        let tokens = try await tokens(client: clientID, resource: nil)
        #expect(tokens.status == 200, "\(tokens.text)")

        let read = try await http.get(clientURI, headers: ["Authorization": "Bearer \(accessToken)"])
        #expect(read.status == 200)
        #expect(read.json["client_id"] as? String == clientID)
        // Each read hands out the next registration access token; the one used is spent.
        let next = try #require(read.json["registration_access_token"] as? String)
        #expect(next != accessToken)
        #expect(try await http.get(clientURI, headers: ["Authorization": "Bearer \(accessToken)"]).status == 401)
        #expect(try await http.get(clientURI, headers: ["Authorization": "Bearer wrong"]).status == 401)
        #expect(try await http.get(clientURI).status == 401)

        // A server that forgets its registrations answers 401 to the read, and refuses the client.
        #expect(try await http.send(method: "DELETE", "\(sandbox.baseURL)/_admin/clients", headers: [:], body: nil).status == 204)
        #expect(try await http.get(clientURI, headers: ["Authorization": "Bearer \(next)"]).status == 401)
        let page = try await http.get(browser.authorizeURL(Browser.parameters(client: clientID, redirectURI: Clients.loopback)))
        #expect(page.text.contains("No application with this client_id"))
    }

    @Test func aConfidentialRegistrationGetsASecretItMustUse() async throws {
        var metadata = Self.native
        metadata["token_endpoint_auth_method"] = "client_secret_post"
        let reply = try await register(metadata)
        #expect(reply.status == 201)
        let secret = try #require(reply.json["client_secret"] as? String)
        #expect(!secret.isEmpty)
        #expect(reply.json["client_secret_expires_at"] as? Int == 0)
    }

    @Test(
        arguments: [
            ([:], "invalid_redirect_uri"),
            (["redirect_uris": [String]()], "invalid_redirect_uri"),
            (["redirect_uris": ["http://example.com/callback"]], "invalid_redirect_uri"),
            (["redirect_uris": ["https://app.example/cb#frag"]], "invalid_redirect_uri"),
            (["redirect_uris": ["javascript:alert(1)"]], "invalid_redirect_uri"),
            (["redirect_uris": ["myapp:/cb"]], "invalid_redirect_uri"),
            (["redirect_uris": [Clients.loopback], "token_endpoint_auth_method": "private_key_jwt"], "invalid_client_metadata"),
            (["redirect_uris": [Clients.loopback], "grant_types": ["implicit"]], "invalid_client_metadata"),
            (["redirect_uris": [Clients.loopback], "response_types": ["token"]], "invalid_client_metadata"),
            (["redirect_uris": [Clients.loopback], "application_type": "tv"], "invalid_client_metadata"),
            (["redirect_uris": [Clients.loopback], "client_name": 7], "invalid_client_metadata"),
        ] as [([String: any Sendable], String)])
    func badMetadataIsRefusedWithRFC7591Errors(metadata: [String: any Sendable], error: String) async throws {
        let reply = try await register(metadata)
        #expect(reply.status == 400)
        #expect(reply.error == error)
        #expect(reply.json["error_description"] is String)
    }

    @Test func aBodyThatIsNotJSONIsInvalidClientMetadata() async throws {
        let reply = try await http.postForm("\(sandbox.baseURL)/register", [("redirect_uris", Clients.loopback)])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_client_metadata")
    }

    /// A client known by the URL of its metadata document: no registration; the document
    /// must name itself, list the redirect URI, and use no shared secret.
    @Test func aClientIDThatIsItsMetadataDocumentsURLSignsInWithoutRegistering() async throws {
        let sandbox = try await RunningSandbox.start()
        let documents = try await ClientMetadataServer()
        let discovery = try await HTTPClient().get("\(sandbox.baseURL)/.well-known/openid-configuration")
        #expect(discovery.json["client_id_metadata_document_supported"] as? Bool == true)

        func authorize(_ clientID: String) async throws -> Reply {
            try await HTTPClient().get(
                "\(sandbox.baseURL)/authorize?"
                    + HTTPClient.form([
                        ("response_type", "code"), ("client_id", clientID), ("redirect_uri", "http://127.0.0.1:40111/callback"),
                        ("scope", "openid"), ("state", "s"), ("code_challenge", String(repeating: "a", count: 43)),
                        ("code_challenge_method", "S256"),
                    ]))
        }
        let page = try await authorize(documents.url())
        #expect(page.status == 200 && page.text.contains("Latchkey (by its document)"), "the sign-in page names the document's client")
        for refused in [documents.url("lying"), documents.url("secret"), documents.url("missing")] {
            let answer = try await authorize(refused)
            #expect(answer.status == 400 && answer.header("location") == nil, "\(refused): \(answer.status)")
        }
        #expect(try await sandbox.statistics()["client_metadata_fetches"] == 4)
        #expect(try await sandbox.statistics()["registrations"] == 0)
    }

    @Test func aProtectedResourceChallengesWithItsMetadataAndScope() async throws {
        let reply = try await http.get("\(sandbox.baseURL)/api/me")
        #expect(reply.status == 401)
        let challenge = try #require(reply.header("www-authenticate"))
        let metadataURL = "\(sandbox.baseURL)/.well-known/oauth-protected-resource/api/me"
        #expect(challenge.hasPrefix("Bearer "))
        #expect(challenge.contains(#"resource_metadata="\#(metadataURL)""#))
        #expect(challenge.contains(#"scope="openid profile""#))

        let metadata = try await http.get(metadataURL).json
        #expect(metadata["resource"] as? String == "\(sandbox.baseURL)/api/me")
        #expect(metadata["authorization_servers"] as? [String] == [sandbox.baseURL])
        // One more than the challenge asks for: a client that takes the metadata's over the challenge's shows.
        #expect(metadata["scopes_supported"] as? [String] == ["openid", "profile", "email"])
    }

    @Test func aTokenForOneResourceIsRefusedAtAnotherAndAtNone() async throws {
        let me = "\(sandbox.baseURL)/api/me"
        let notes = "\(sandbox.baseURL)/api/notes"
        let reply = try await tokens(client: Clients.publicID, resource: me)
        #expect(reply.status == 200, "\(reply.text)")
        let token = try #require(reply.json["access_token"] as? String)
        let answer = try await http.get(me, headers: ["Authorization": "Bearer \(token)"])
        #expect(answer.status == 200)
        #expect(answer.json["username"] as? String == "ada")

        let elsewhere = try await http.get(notes, headers: ["Authorization": "Bearer \(token)"])
        #expect(elsewhere.status == 401)
        #expect(elsewhere.header("www-authenticate")?.contains(#"error="invalid_token""#) == true)

        // Refreshed, it keeps its audience.
        let refresh = try #require(reply.json["refresh_token"] as? String)
        let renewed = try #require(try await browser.refresh(refresh).json["access_token"] as? String)
        #expect(try await http.get(me, headers: ["Authorization": "Bearer \(renewed)"]).status == 200)

        // A token without a resource is the provider's own: no protected resource takes it.
        let plain = try #require(try await tokens(client: Clients.publicID, resource: nil).json["access_token"] as? String)
        #expect(try await http.get(me, headers: ["Authorization": "Bearer \(plain)"]).status == 401)
    }

    @Test func aResourceTheServerDoesNotKnowIsInvalidTarget() async throws {
        var parameters = Browser.parameters(redirectURI: Clients.loopback)
        parameters.append(("resource", "https://elsewhere.example/api"))
        let page = try await http.get(browser.authorizeURL(parameters))
        #expect(page.status == 302)
        #expect(page.redirectParameters["error"] == "invalid_target")

        // At the token endpoint, another resource than the authorized one is refused too.
        let me = "\(sandbox.baseURL)/api/me"
        let notes = "\(sandbox.baseURL)/api/notes"
        let reply = try await tokens(client: Clients.publicID, resource: me, tokenResource: .some(notes))
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_target")
    }

    @Test func aTokenWithoutTheResourcesScopeIsInsufficientScope() async throws {
        let me = "\(sandbox.baseURL)/api/me"
        let token = try #require(try await tokens(client: Clients.publicID, resource: me, scope: "openid").json["access_token"] as? String)
        let reply = try await http.get(me, headers: ["Authorization": "Bearer \(token)"])
        #expect(reply.status == 403)
        #expect(reply.header("www-authenticate")?.contains(#"error="insufficient_scope""#) == true)
    }
}
