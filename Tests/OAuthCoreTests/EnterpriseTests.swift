import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// Enterprise-Managed Authorization against two real latchkey-sandboxes, one the organisation's
/// identity provider and one an MCP server's authorization server that takes its ID-JAGs: one
/// sign-in at the identity provider, three MCP servers reached with no page of their own.
@Suite struct EnterpriseTests {
    struct Organisation {
        let idp: LiveSandbox
        let server: RunningSandbox
        let directory: TemporaryDirectory
        let identityProvider: Provider

        /// The identity provider signed in as Ada; the MCP server's authorization server trusting it and
        /// knowing the app as `mcp-client`; a policy that lets Ada use the servers in `allowed`.
        static func start(allowed: [String] = ["/api/me", "/api/notes", "/api/open"], serverArguments: [String] = []) async throws
            -> Organisation
        {
            let idp = try await LiveSandbox()
            let directory = try TemporaryDirectory()
            let config = try directory.write(
                #"""
                {"users": [{"username": "ada", "password": "engine", "name": "Ada", "email": "ada@sandbox.example"}],
                 "clients": [{"client_id": "mcp-client", "client_secret": "mcp-secret", "name": "Latchkey at the MCP server"}]}
                """#, to: "server.json")
            let server = try await RunningSandbox.start(["--config", config.path, "--trust-idp", idp.sandbox.baseURL] + serverArguments)
            let policy = allowed.map { path in
                [
                    "user": "ada", "audience": server.baseURL, "resource": server.baseURL + path, "scopes": ["openid", "profile"],
                    "client_id": "mcp-client",
                ] as [String: Any]
            }
            let reply = try await HTTPClient().send(
                method: "POST", "\(idp.sandbox.baseURL)/_admin/id-jag-policy", headers: ["Content-Type": "application/json"],
                body: try JSONSerialization.data(withJSONObject: policy))
            try #require(reply.status == 204)
            _ = try await idp.signIn(idp.session())
            let identityProvider = Provider(configuration: idp.configuration, store: idp.store, network: Network(logger: idp.log.logger))
            return Organisation(idp: idp, server: server, directory: directory, identityProvider: identityProvider)
        }

        /// The MCP server at `path`, as a provider file that names the identity provider.
        func mcpServer(_ path: String) throws -> Provider {
            let name = "mcp" + path.replacingOccurrences(of: "/", with: "-")
            let file = try directory.write(
                #"""
                {"id": "\#(name)", "issuer": "\#(server.baseURL)", "token_endpoint": "/token", "grant": "id_jag",
                 "identity_provider": "sandbox", "resource": "\#(server.baseURL)\#(path)", "client_id": "mcp-client",
                 "client_secret": "mcp-secret", "scopes": ["openid", "profile"]}
                """#, to: "providers/\(name).json")
            let configuration = try ProviderCatalog(
                presetDirectories: [], userConfigDirectory: file.deletingLastPathComponent(), environment: [:]
            ).configuration(named: name)
            return Provider(
                configuration: configuration, store: idp.store, network: Network(logger: idp.log.logger),
                identityProviders: { [identityProvider] id in
                    guard id == "sandbox" else { throw OAuthError.unknownProvider(id) }
                    return identityProvider
                })
        }

        func introspect(_ token: Token) async throws -> [String: Any] {
            try await HTTPClient().postForm(
                "\(server.baseURL)/introspect", [("token", token.accessToken)],
                headers: ["Authorization": "Basic " + Data("mcp-client:mcp-secret".utf8).base64EncodedString()]
            ).json
        }
    }

    @Test func oneSignInAtTheIdentityProviderReachesThreeServersWithNoPage() async throws {
        let organisation = try await Organisation.start()
        for path in ["/api/me", "/api/notes", "/api/open"] {
            let token = try await organisation.mcpServer(path).session.freshToken()
            let seen = try await organisation.introspect(token)
            #expect(seen["active"] as? Bool == true && seen["aud"] as? String == organisation.server.baseURL + path, "\(seen)")
            #expect(seen["username"] as? String == "ada")
            #expect(token.refreshToken == nil, "the server's token is minted again, never refreshed")
        }
        let idp = try await organisation.idp.sandbox.statistics()
        let server = try await organisation.server.statistics()
        #expect(idp["authorization_code_grants"] == 1, "one sign-in, at the identity provider: \(idp)")
        #expect(idp["id_jags_issued"] == 3 && server["id_jags_redeemed"] == 3)
        #expect(server["authorization_code_grants"] == 0, "no sign-in page at the MCP server")
        let log = organisation.idp.log.text
        #expect(!log.contains("mcp-secret"), "no client secret in the log")
    }

    @Test func anEndedTokenIsMintedAgainWithNoPrompt() async throws {
        let organisation = try await Organisation.start(serverArguments: ["--access-token-ttl", "2"])
        let session = try organisation.mcpServer("/api/me").session
        let first = try await session.freshToken()
        // Past its two seconds (a slower run only makes it older): the next ask mints another.
        while !first.expires(within: 0) { try await Task.sleep(for: .milliseconds(100)) }
        let second = try await session.freshToken()
        #expect(second.accessToken != first.accessToken)
        #expect(try await organisation.introspect(second)["active"] as? Bool == true)
        #expect(try await organisation.idp.sandbox.statistics()["id_jags_issued"] == 2)
        #expect(try await organisation.idp.sandbox.statistics()["authorization_code_grants"] == 1, "no new sign-in")
    }

    @Test func aServerThePolicyRefusesIsSaidInASentence() async throws {
        let organisation = try await Organisation.start(allowed: ["/api/me"])
        let session = try organisation.mcpServer("/api/notes").session
        let error = await #expect(throws: OAuthError.self) { try await session.freshToken() }
        let said = error.map { "\($0)" } ?? ""
        #expect(said.contains("does not let you use \(organisation.server.baseURL)/api/notes"), "\(said)")
        #expect(try await organisation.server.statistics()["id_jags_redeemed"] == 0)
    }

    @Test func anIDJAGUsedTwiceIsRefusedByTheServer() async throws {
        let organisation = try await Organisation.start()
        let resource = try #require(URL(string: organisation.server.baseURL + "/api/me"))
        let jag = try await organisation.identityProvider.idJAG(
            audience: organisation.server.baseURL, resource: resource, scopes: ["openid"])
        func redeem() async throws -> (Int, String?) {
            let reply = try await HTTPClient().postForm(
                "\(organisation.server.baseURL)/token",
                [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", jag)],
                headers: ["Authorization": "Basic " + Data("mcp-client:mcp-secret".utf8).base64EncodedString()])
            return (reply.status, reply.json["error_description"] as? String)
        }
        #expect(try await redeem().0 == 200)
        let (status, said) = try await redeem()
        #expect(status == 400 && said?.contains("used before") == true, "\(status) \(said ?? "")")
    }
}

extension EnterpriseTests {
    /// The server's token was had through Ada's sign-in at the identity provider: once she signs out
    /// there, it is not served (though it has not ended), and a new one needs a new sign-in.
    @Test func aSignOutAtTheIdentityProviderEndsTheServersTokensHere() async throws {
        let organisation = try await Organisation.start()
        let session = try organisation.mcpServer("/api/me").session
        let token = try await session.freshToken()
        #expect(try await session.freshToken().accessToken == token.accessToken, "served while the sign-in lasts")
        _ = await organisation.identityProvider.session.signOut()
        let error = await #expect(throws: OAuthError.self) { try await session.freshToken() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("not signed in to Sandbox provider"), "\(String(describing: error))")
        // Another process, reading the store: the same.
        let other = try organisation.mcpServer("/api/me").session
        await #expect(throws: OAuthError.self) { try await other.freshToken() }
    }
}
