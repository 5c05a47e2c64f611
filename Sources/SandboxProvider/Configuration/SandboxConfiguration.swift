import Foundation

/// Everything the sandbox knows before it starts: who may sign in, which
/// clients exist, and how long what it issues lives.
public struct SandboxConfiguration: Codable, Sendable, Equatable {
    public var users: [SandboxUser]
    public var clients: [SandboxClient]
    /// OAuth 1.0a consumers; the built-in one when a file names none.
    public var consumers: [SandboxConsumer]
    /// Seconds an access token lives.
    public var accessTokenTTL: Int
    /// Seconds an authorization code lives.
    public var codeTTL: Int
    /// Seconds the sign-in page stays valid before the user must start again.
    public var signInPageTTL: Int
    /// Seconds a client may keep the discovery document without asking again (`Cache-Control: max-age`).
    public var discoveryMaxAge: Int
    /// RFC 8628: seconds a device code lives, and between a client's checks (`interval`).
    public var deviceCodeTTL = 600
    public var deviceInterval = 5
    /// RFC 9126: whether authorization requests may, or must, be pushed first.
    public var pushedRequests = PushedRequests.off
    /// Seconds a pushed request's `request_uri` lives.
    public var pushedRequestTTL = 60
    /// As an MCP server's authorization server: the issuer of the organisation's identity provider whose
    /// ID-JAGs it takes (the JWT bearer grant, RFC 7523), nil for none.
    public var trustedIdentityProvider: String?
    /// Whether a client may have a narrower token than its grant: fewer scopes, or one resource.
    public var narrowing = Narrowing.exchange
    /// RFC 9449: whether tokens are bound to the key of the client's DPoP proofs.
    public var dpop = DPoP.off
    /// RFC 9449: which of a DPoP sign-in's tokens are bound to its key.
    public var dpopBinds = DPoPBinding.all
    /// Seconds a refresh token lives from when it was issued (each refresh issues a new one: an idle
    /// lifetime), said in the answer as `refresh_token_expires_in` as GitHub's user tokens say theirs;
    /// an older one is `invalid_grant`. Nil: refresh tokens never expire.
    public var refreshTokenTTL: Int?
    /// Whether answers say `refreshTokenTTL` (`refresh_token_expires_in`); false: as most providers, which
    /// end refresh tokens left idle without saying when (Keycloak, Okta, Auth0).
    public var saysRefreshTokenTTL = true

    public enum DPoPBinding: String, Codable, Sendable, CaseIterable {
        /// Access and refresh tokens (`token_type` `DPoP`): a resource wants a proof with the token.
        case all
        /// The refresh token alone; access tokens are bearer tokens (Keycloak's option for public
        /// clients, Google's way).
        case refresh
    }

    public enum DPoP: String, Codable, Sendable, CaseIterable {
        /// Not offered: a `DPoP` header is ignored (§5), every token is a bearer token.
        case off
        /// Offered (`dpop_signing_alg_values_supported`): a token request with a proof gets tokens bound
        /// to its key, the refresh token too, and a bound grant's refresh needs a proof of that key.
        case on
        /// As `on`, and every proof must carry the server's current nonce (§8: `use_dpop_nonce`).
        case nonce
    }

    public enum Narrowing: String, Codable, Sendable, CaseIterable {
        /// A refresh may name fewer scopes (RFC 6749 §6) and a resource (RFC 8707 §2.2), and RFC 8693
        /// token exchange is offered (and listed in discovery), as Keycloak, Okta and Auth0 do.
        case exchange
        /// A refresh may narrow; no token exchange.
        case refresh
        /// Neither: a refresh answers the whole grant whatever it names, as GitHub's and GitLab's do.
        case none
    }

    public enum PushedRequests: String, Codable, Sendable, CaseIterable {
        /// No endpoint: requests come in the page's address.
        case off
        /// The endpoint is listed; a request in the address is taken too.
        case offered
        /// The endpoint is listed with `require_pushed_authorization_requests`; nothing else is taken.
        case required
    }

    public init(
        users: [SandboxUser], clients: [SandboxClient], consumers: [SandboxConsumer] = SandboxConfiguration.builtInConsumers,
        accessTokenTTL: Int = 3600,
        codeTTL: Int = 60, signInPageTTL: Int = 600, discoveryMaxAge: Int = 3600
    ) {
        self.users = users
        self.clients = clients
        self.consumers = consumers
        self.accessTokenTTL = accessTokenTTL
        self.codeTTL = codeTTL
        self.signInPageTTL = signInPageTTL
        self.discoveryMaxAge = discoveryMaxAge
    }

    enum CodingKeys: String, CodingKey {
        case users, clients, consumers
        case accessTokenTTL = "access_token_ttl"
        case codeTTL = "code_ttl"
        case signInPageTTL = "sign_in_page_ttl"
        case discoveryMaxAge = "discovery_max_age"
        case deviceCodeTTL = "device_code_ttl"
        case deviceInterval = "device_interval"
        case pushedRequests = "pushed_requests"
        case pushedRequestTTL = "pushed_request_ttl"
        case narrowing, dpop
        case dpopBinds = "dpop_binds"
        case refreshTokenTTL = "refresh_token_ttl"
        case saysRefreshTokenTTL = "says_refresh_token_ttl"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        users = try c.decode([SandboxUser].self, forKey: .users)
        clients = try c.decode([SandboxClient].self, forKey: .clients)
        consumers = try c.decodeIfPresent([SandboxConsumer].self, forKey: .consumers) ?? Self.builtInConsumers
        accessTokenTTL = try c.decodeIfPresent(Int.self, forKey: .accessTokenTTL) ?? 3600
        codeTTL = try c.decodeIfPresent(Int.self, forKey: .codeTTL) ?? 60
        signInPageTTL = try c.decodeIfPresent(Int.self, forKey: .signInPageTTL) ?? 600
        discoveryMaxAge = try c.decodeIfPresent(Int.self, forKey: .discoveryMaxAge) ?? 3600
        deviceCodeTTL = try c.decodeIfPresent(Int.self, forKey: .deviceCodeTTL) ?? 600
        deviceInterval = try c.decodeIfPresent(Int.self, forKey: .deviceInterval) ?? 5
        pushedRequests = try c.decodeIfPresent(PushedRequests.self, forKey: .pushedRequests) ?? .off
        pushedRequestTTL = try c.decodeIfPresent(Int.self, forKey: .pushedRequestTTL) ?? 60
        narrowing = try c.decodeIfPresent(Narrowing.self, forKey: .narrowing) ?? .exchange
        dpop = try c.decodeIfPresent(DPoP.self, forKey: .dpop) ?? .off
        dpopBinds = try c.decodeIfPresent(DPoPBinding.self, forKey: .dpopBinds) ?? .all
        refreshTokenTTL = try c.decodeIfPresent(Int.self, forKey: .refreshTokenTTL)
        saysRefreshTokenTTL = try c.decodeIfPresent(Bool.self, forKey: .saysRefreshTokenTTL) ?? true
    }

    /// The redirect URIs an embedded web view can intercept, one of each kind.
    public static let appRedirectURIs = [
        "https://latchkey.invalid/oauth2/callback",  // an https URI on a host that cannot exist (RFC 6761)
        "io.github.latchkey:/oauth2redirect",  // a private-use scheme (RFC 8252 §7.1)
        "http://127.0.0.1/callback",  // loopback, any port (RFC 8252 §7.3)
    ]

    /// The OAuth 1.0a consumer Latchkey's sandbox preset uses, documented in docs/sandbox.md.
    public static let builtInConsumers = [
        SandboxConsumer(
            key: "latchkey-oauth1", secret: "sandbox-oauth1-secret", name: "Latchkey (OAuth 1.0a)", callbacks: appRedirectURIs)
    ]

    /// The built-in users and clients, documented in docs/sandbox.md.
    public static let defaults = SandboxConfiguration(
        users: [
            SandboxUser(
                username: "ada", password: "engine", name: "Ada Lovelace", givenName: "Ada",
                familyName: "Lovelace", email: "ada@sandbox.example"),
            SandboxUser(
                username: "grace", password: "compiler", name: "Grace Hopper", givenName: "Grace",
                familyName: "Hopper", email: "grace@sandbox.example", publicProfile: false),
        ],
        clients: [
            SandboxClient(clientID: "latchkey-desktop", name: "Latchkey", redirectURIs: appRedirectURIs),
            SandboxClient(
                clientID: "latchkey-confidential", clientSecret: "sandbox-secret",
                name: "Latchkey (confidential)", redirectURIs: appRedirectURIs),
        ])

    public static func load(from url: URL) throws -> SandboxConfiguration {
        let data = try Data(contentsOf: url)
        let configuration = try JSONDecoder().decode(SandboxConfiguration.self, from: data)
        try configuration.validate()
        return configuration
    }

    func validate() throws {
        guard accessTokenTTL > 0, codeTTL > 0 else {
            throw SandboxConfigurationError("Lifetimes must be positive numbers of seconds.")
        }
        for client in clients where client.redirectURIs.isEmpty && client.isPublic {
            throw SandboxConfigurationError("Client \(client.clientID) has no redirect URI. (Only a confidential client may have none.)")
        }
        for client in clients {
            for uri in client.redirectURIs {
                guard let parts = URLComponents(string: uri), parts.scheme != nil, parts.fragment == nil else {
                    throw SandboxConfigurationError(
                        "Client \(client.clientID): \(uri) is not an absolute URI without fragment.")
                }
            }
        }
        if Set(users.map(\.username)).count != users.count {
            throw SandboxConfigurationError("Two users share a username.")
        }
        for consumer in consumers where consumer.secret == nil && consumer.rsaPublicKey == nil {
            throw SandboxConfigurationError("Consumer \(consumer.key) has neither a secret nor an RSA public key.")
        }
        if Set(consumers.map(\.key)).count != consumers.count {
            throw SandboxConfigurationError("Two consumers share a key.")
        }
        if Set(clients.map(\.clientID)).count != clients.count {
            throw SandboxConfigurationError("Two clients share a client_id.")
        }
    }

    func client(_ id: String) -> SandboxClient? { clients.first { $0.clientID == id } }
    func consumer(_ key: String) -> SandboxConsumer? { consumers.first { $0.key == key } }
    func user(_ username: String) -> SandboxUser? { users.first { $0.username == username } }
}
