import Foundation

/// A person who can sign in at the sandbox.
public struct SandboxUser: Codable, Sendable, Equatable {
    public var username: String
    public var password: String
    public var name: String
    public var givenName: String?
    public var familyName: String?
    public var email: String
    public var emailVerified: Bool
    /// Whether name and e-mail are public where a provider lets people hide them
    /// (GitHub's `/user` then says null, GitLab's `public_email` is empty).
    public var publicProfile: Bool

    public init(
        username: String, password: String, name: String, givenName: String? = nil,
        familyName: String? = nil, email: String, emailVerified: Bool = true, publicProfile: Bool = true
    ) {
        self.username = username
        self.password = password
        self.name = name
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
        self.emailVerified = emailVerified
        self.publicProfile = publicProfile
    }

    enum CodingKeys: String, CodingKey {
        case username, password, name, email
        case givenName = "given_name"
        case familyName = "family_name"
        case emailVerified = "email_verified"
        case publicProfile = "public_profile"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        username = try c.decode(String.self, forKey: .username)
        password = try c.decode(String.self, forKey: .password)
        name = try c.decode(String.self, forKey: .name)
        givenName = try c.decodeIfPresent(String.self, forKey: .givenName)
        familyName = try c.decodeIfPresent(String.self, forKey: .familyName)
        email = try c.decode(String.self, forKey: .email)
        emailVerified = try c.decodeIfPresent(Bool.self, forKey: .emailVerified) ?? true
        publicProfile = try c.decodeIfPresent(Bool.self, forKey: .publicProfile) ?? true
    }
}

/// An application registered at the sandbox. Without a secret it is a public
/// client (a desktop app cannot keep one) and must use PKCE.
public struct SandboxClient: Codable, Sendable, Equatable {
    public var clientID: String
    public var clientSecret: String?
    public var name: String
    public var redirectURIs: [String]

    public var isPublic: Bool { clientSecret == nil }

    public init(clientID: String, clientSecret: String? = nil, name: String, redirectURIs: [String]) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.name = name
        self.redirectURIs = redirectURIs
    }

    enum CodingKeys: String, CodingKey {
        case name
        case clientID = "client_id"
        case clientSecret = "client_secret"
        case redirectURIs = "redirect_uris"
    }

    /// RFC 6749 §3.1.2.3: the redirect URI must equal a registered one, except
    /// that a loopback `http` URI may carry any port (RFC 8252 §7.3).
    public func isRegistered(redirectURI: String) -> Bool {
        redirectURIs.contains { registered in
            registered == redirectURI || Self.sameLoopbackURIIgnoringPort(registered, redirectURI)
        }
    }

    /// `http://127.0.0.1` or `http://[::1]`, with or without a port.
    static func isLoopbackHTTP(_ uri: String) -> Bool {
        guard let parts = URLComponents(string: uri), parts.scheme == "http", let host = parts.host else { return false }
        return ["127.0.0.1", "[::1]", "::1"].contains(host)
    }

    private static func sameLoopbackURIIgnoringPort(_ registered: String, _ requested: String) -> Bool {
        guard let r = URLComponents(string: registered), let q = URLComponents(string: requested),
            r.scheme == "http", q.scheme == "http",
            let host = r.host, ["127.0.0.1", "[::1]", "::1"].contains(host),
            q.host == host, r.port == nil,
            q.user == nil, q.password == nil, q.fragment == nil,
            q.percentEncodedPath == r.percentEncodedPath, q.percentEncodedQuery == r.percentEncodedQuery
        else { return false }
        return true
    }
}

/// Everything the sandbox knows before it starts: who may sign in, which
/// clients exist, and how long what it issues lives.
public struct SandboxConfiguration: Codable, Sendable, Equatable {
    public var users: [SandboxUser]
    public var clients: [SandboxClient]
    /// Seconds an access token lives.
    public var accessTokenTTL: Int
    /// Seconds an authorization code lives.
    public var codeTTL: Int
    /// Seconds the sign-in page stays valid before the user must start again.
    public var signInPageTTL: Int

    public init(
        users: [SandboxUser], clients: [SandboxClient], accessTokenTTL: Int = 3600,
        codeTTL: Int = 60, signInPageTTL: Int = 600
    ) {
        self.users = users
        self.clients = clients
        self.accessTokenTTL = accessTokenTTL
        self.codeTTL = codeTTL
        self.signInPageTTL = signInPageTTL
    }

    enum CodingKeys: String, CodingKey {
        case users, clients
        case accessTokenTTL = "access_token_ttl"
        case codeTTL = "code_ttl"
        case signInPageTTL = "sign_in_page_ttl"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        users = try c.decode([SandboxUser].self, forKey: .users)
        clients = try c.decode([SandboxClient].self, forKey: .clients)
        accessTokenTTL = try c.decodeIfPresent(Int.self, forKey: .accessTokenTTL) ?? 3600
        codeTTL = try c.decodeIfPresent(Int.self, forKey: .codeTTL) ?? 60
        signInPageTTL = try c.decodeIfPresent(Int.self, forKey: .signInPageTTL) ?? 600
    }

    /// The redirect URIs an embedded web view can intercept, one of each kind.
    public static let appRedirectURIs = [
        "https://latchkey.invalid/oauth2/callback",  // an https URI on a host that cannot exist (RFC 6761)
        "io.github.latchkey:/oauth2redirect",  // a private-use scheme (RFC 8252 §7.1)
        "http://127.0.0.1/callback",  // loopback, any port (RFC 8252 §7.3)
    ]

    /// The built-in users and clients, documented in README.
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
        for client in clients where client.redirectURIs.isEmpty {
            throw SandboxConfigurationError("Client \(client.clientID) has no redirect URI.")
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
        if Set(clients.map(\.clientID)).count != clients.count {
            throw SandboxConfigurationError("Two clients share a client_id.")
        }
    }

    func client(_ id: String) -> SandboxClient? { clients.first { $0.clientID == id } }
    func user(_ username: String) -> SandboxUser? { users.first { $0.username == username } }
}

public struct SandboxConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
