import Crypto
import CryptoExtras
import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// Tokens in a client's own name (RFC 6749 §4.4), the client proving itself with a secret or with a
/// JWT its key signs (private_key_jwt, RFC 7523 §2.2), against the real latchkey-sandbox: nobody signs
/// in, no refresh token is kept, and the sandbox refuses a wrong key, a wrong audience and a replay.
@Suite struct ClientCredentialsTests {
    /// A sandbox whose clients are machines: one with a secret, one with a P-256 key, one with an RSA key.
    struct Machines {
        let sandbox: RunningSandbox
        let directory: TemporaryDirectory
        let ecKey: URL
        let rsaKey: URL
        let strangerKey: URL

        /// `kept`: a key Latchkey keeps, registered for the client `machine-kept`.
        static func start(kept: ClientKey? = nil) async throws -> Machines {
            let directory = try TemporaryDirectory()
            let ec = P256.Signing.PrivateKey()
            let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let ecKey = try directory.write(ec.pemRepresentation, to: "ec.pem")
            let rsaKey = try directory.write(rsa.pemRepresentation, to: "rsa.pem")
            let strangerKey = try directory.write(P256.Signing.PrivateKey().pemRepresentation, to: "stranger.pem")
            for key in [ecKey, rsaKey, strangerKey] { chmod(key.path, 0o600) }
            let clients: [[String: Any]] =
                [
                    ["client_id": "machine-basic", "client_secret": "machine-secret", "name": "A machine"],
                    ["client_id": "machine-ec", "name": "A machine with a P-256 key", "jwks": [try jwk(ecKey)]],
                    ["client_id": "machine-rsa", "name": "A machine with an RSA key", "jwks": [try jwk(rsaKey)]],
                    ["client_id": "latchkey-desktop", "name": "Latchkey", "redirect_uris": ["http://127.0.0.1/callback"]],
                ]
                + (kept.map { [["client_id": "machine-kept", "name": "A machine whose key Latchkey keeps", "jwks": [jwk(of: $0)]]] } ?? [])
            let users: [[String: Any]] = [["username": "ada", "password": "engine", "name": "Ada", "email": "ada@sandbox.example"]]
            let config = try directory.write(
                String(decoding: try JSONSerialization.data(withJSONObject: ["users": users, "clients": clients]), as: UTF8.self),
                to: "sandbox.json")
            let sandbox = try await RunningSandbox.start(["--config", config.path])
            return Machines(sandbox: sandbox, directory: directory, ecKey: ecKey, rsaKey: rsaKey, strangerKey: strangerKey)
        }

        /// The public JWK of the key in `file`, as OAuthCore makes it (with its `kid`).
        static func jwk(_ file: URL) throws -> [String: String] {
            jwk(of: try #require(ClientKey(pem: try String(contentsOf: file, encoding: .utf8))))
        }

        static func jwk(of key: ClientKey) -> [String: String] {
            var members: [String: String] = [:]
            for member in key.publicJWK.members { members[member.key] = member.value.string }
            members["kid"] = key.keyID
            return members
        }

        /// A provider file for a machine client of this sandbox, read as Latchkey reads one.
        func configuration(_ members: String) throws -> ProviderConfiguration {
            let file = try directory.write(
                #"{"id": "machine", "issuer": "\#(sandbox.baseURL)", "token_endpoint": "/token", "grant": "client_credentials", \#(members)}"#,
                to: "providers/machine.json")
            return try ProviderCatalog(
                presetDirectories: [], userConfigDirectory: file.deletingLastPathComponent(), environment: [:]
            ).configuration(named: "machine")
        }

        func session(_ configuration: ProviderConfiguration, log: CapturedLog) -> AuthSession {
            AuthSession(
                configuration: configuration,
                store: FileTokenStore(directory: directory.url.appendingPathComponent("tokens"), logger: log.logger),
                tokenClient: TokenClient(configuration: configuration, network: Network(timeout: 10, logger: log.logger)),
                logger: log.logger)
        }

        /// What the sandbox says of `token`, asked by the client it was given to (as RFC 7662 has it).
        func introspect(_ token: Token, as client: String = "machine-basic") async throws -> [String: Any] {
            guard client != "machine-basic" else {
                return try await HTTPClient().postForm(
                    "\(sandbox.baseURL)/introspect", [("token", token.accessToken)],
                    headers: ["Authorization": "Basic " + Data("machine-basic:machine-secret".utf8).base64EncodedString()]
                ).json
            }
            let key = try #require(ClientKey(pem: try String(contentsOf: client == "machine-ec" ? ecKey : rsaKey, encoding: .utf8)))
            return try await HTTPClient().postForm(
                "\(sandbox.baseURL)/introspect",
                [
                    ("token", token.accessToken), ("client_assertion_type", ClientKey.assertionType),
                    ("client_assertion", try await key.assertion(clientID: client, audience: sandbox.baseURL)),
                ]
            ).json
        }
    }

    @Test func aSecretGetsATokenWithNobodyAndOneIsSharedUntilItIsDue() async throws {
        let machines = try await Machines.start()
        let log = CapturedLog()
        let configuration = try machines.configuration(
            #""client_id": "machine-basic", "client_secret": "machine-secret", "scopes": ["read"]"#)
        #expect(configuration.clientAuthentication == .clientSecretBasic)
        let session = machines.session(configuration, log: log)
        let token = try await session.freshToken()
        #expect(token.refreshToken == nil && token.idToken == nil, "a client's own token: nothing to keep but itself")
        #expect(try await machines.introspect(token)["scope"] as? String == "read")
        #expect(try await machines.sandbox.statistics()["client_credentials_grants"] == 1)
        // Asked again, and by another process (a session of its own over the same store): the kept one.
        #expect(try await session.freshToken().accessToken == token.accessToken)
        let other = machines.session(configuration, log: log)
        #expect(try await other.freshToken().accessToken == token.accessToken)
        #expect(try await machines.sandbox.statistics()["client_credentials_grants"] == 1)
        // Renewed (a program whose token was refused): the grant asked again.
        let renewed = try await other.renewedToken()
        #expect(renewed.accessToken != token.accessToken)
        #expect(try await machines.sandbox.statistics()["client_credentials_grants"] == 2)
        #expect(!log.text.contains("machine-secret") && !log.text.contains(token.accessToken), "no secret or token in the log")
    }

    @Test(arguments: ["ec", "rsa"]) func aKeySignsAnAssertionAndNoSecretTravels(kind: String) async throws {
        let machines = try await Machines.start()
        let key = kind == "ec" ? machines.ecKey : machines.rsaKey
        let configuration = try machines.configuration(#""client_id": "machine-\#(kind)", "private_key_file": "\#(key.path)""#)
        #expect(configuration.clientAuthentication == .privateKeyJWT, "a key and no secret: private_key_jwt, unsaid")
        let token = try await machines.session(configuration, log: CapturedLog()).freshToken()
        #expect(try await machines.introspect(token, as: "machine-\(kind)")["client_id"] as? String == "machine-\(kind)")
        #expect(try await machines.sandbox.statistics()["client_assertions"] == 2, "the token request's, and the introspection's")
    }

    @Test func aNarrowerTokenIsTheGrantAskedForLess() async throws {
        let machines = try await Machines.start()
        let configuration = try machines.configuration(
            #""client_id": "machine-ec", "private_key_file": "\#(machines.ecKey.path)", "scopes": ["read", "write"]"#)
        let session = machines.session(configuration, log: CapturedLog())
        let resource = try #require(URL(string: "\(machines.sandbox.baseURL)/api/open"))
        let narrowed = try await session.narrowedToken(Narrowing(scopes: ["read"], resource: resource))
        let seen = try await machines.introspect(narrowed, as: "machine-ec")
        #expect(seen["scope"] as? String == "read" && seen["aud"] as? String == resource.absoluteString)
    }

    @Test func theWrongKeyIsASentenceAndNothingIsKept() async throws {
        let machines = try await Machines.start()
        let configuration = try machines.configuration(#""client_id": "machine-ec", "private_key_file": "\#(machines.strangerKey.path)""#)
        let session = machines.session(configuration, log: CapturedLog())
        let error = await #expect(throws: OAuthError.self) { try await session.freshToken() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("signature does not verify"), "\(String(describing: error))")
        #expect(await session.currentToken() == nil)
    }

    /// Sent by hand: an assertion for another server, and one sent twice.
    @Test func theSandboxRefusesAnotherAudienceAndAReplay() async throws {
        let machines = try await Machines.start()
        let key = try #require(ClientKey(pem: try String(contentsOf: machines.ecKey, encoding: .utf8)))
        func ask(_ assertion: String) async throws -> (Int, String?) {
            let reply = try await HTTPClient().postForm(
                "\(machines.sandbox.baseURL)/token",
                [
                    ("grant_type", "client_credentials"), ("client_assertion_type", ClientKey.assertionType),
                    ("client_assertion", assertion),
                ])
            return (reply.status, reply.json["error_description"] as? String)
        }
        let elsewhere = try await key.assertion(clientID: "machine-ec", audience: "https://elsewhere.example")
        let (status, said) = try await ask(elsewhere)
        #expect(status == 401 && said?.contains("aud must name this authorization server") == true, "\(status) \(said ?? "")")
        let once = try await key.assertion(clientID: "machine-ec", audience: machines.sandbox.baseURL)
        #expect(try await ask(once).0 == 200)
        let (again, replayed) = try await ask(once)
        #expect(again == 401 && replayed?.contains("used before") == true, "\(again) \(replayed ?? "")")
    }

    /// A key Latchkey made and keeps where client secrets are (`latchkey client-key`): the file names no key.
    @Test func aKeyLatchkeyKeepsProvesTheClientWithNoKeyFile() async throws {
        let kept = await ClientKey.made()
        let machines = try await Machines.start(kept: kept)
        let directory = machines.directory.url
        let file = try machines.directory.write(
            #"{"id": "machine", "issuer": "\#(machines.sandbox.baseURL)", "token_endpoint": "/token", "grant": "client_credentials", "client_id": "machine-kept", "client_authentication": "private_key_jwt"}"#,
            to: "kept/machine.json")
        let catalog = ProviderCatalog(presetDirectories: [], userConfigDirectory: file.deletingLastPathComponent(), environment: [:])
        let secrets = FileClientSecretStore(directory: directory.appendingPathComponent("secrets"))
        let missing = await #expect(throws: OAuthError.self) { try await catalog.configuration(named: "machine", secrets: secrets) }
        #expect("\(missing.map { "\($0)" } ?? "")".contains("have a key made and kept for it"), "\(String(describing: missing))")
        try secrets.save(try #require(kept.stored), for: ProviderCatalog.clientKeyName("machine"))
        let configuration = try await catalog.configuration(named: "machine", secrets: secrets)
        let log = CapturedLog()
        let token = try await machines.session(configuration, log: log).freshToken()
        #expect(!token.accessToken.isEmpty)
        #expect(try await machines.sandbox.statistics()["client_assertions"] == 1)
        #expect(!log.text.contains(try #require(kept.stored)), "the key is never logged")
    }

    @Test func aKeyOthersCanReadIsRefusedInASentence() async throws {
        let machines = try await Machines.start()
        chmod(machines.ecKey.path, 0o644)
        let configuration = try machines.configuration(#""client_id": "machine-ec", "private_key_file": "\#(machines.ecKey.path)""#)
        let error = await #expect(throws: OAuthError.self) { try await machines.session(configuration, log: CapturedLog()).freshToken() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("readable by others"), "\(String(describing: error))")
        #expect(try await machines.sandbox.statistics()["token_requests"] == 0, "nothing was sent")
    }

    @Test func aProviderFileForClientCredentialsNeedsAClientThatCanProveItself() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            #"{"id": "machine", "token_endpoint": "https://id.example/token", "grant": "client_credentials", "client_id": "m"}"#,
            to: "providers/machine.json")
        let catalog = ProviderCatalog(presetDirectories: [], userConfigDirectory: file.deletingLastPathComponent(), environment: [:])
        let error = #expect(throws: OAuthError.self) { try catalog.configuration(named: "machine") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("client_secret_basic"), "\(String(describing: error))")
    }
}
