import Foundation

/// An application registered at the sandbox. Without a secret it is a public
/// client (a desktop app cannot keep one) and must use PKCE.
public struct SandboxClient: Codable, Sendable, Equatable {
    public var clientID: String
    public var clientSecret: String?
    public var name: String
    public var redirectURIs: [String]
    /// The public keys of a client that authenticates with `private_key_jwt` (RFC 7523 §2.2) instead
    /// of a secret: JWKs, each member a string.
    public var jwks: [[String: String]]?

    public var isPublic: Bool { clientSecret == nil && jwks == nil }

    public init(clientID: String, clientSecret: String? = nil, name: String, redirectURIs: [String], jwks: [[String: String]]? = nil) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.name = name
        self.redirectURIs = redirectURIs
        self.jwks = jwks
    }

    enum CodingKeys: String, CodingKey {
        case name
        case clientID = "client_id"
        case clientSecret = "client_secret"
        case redirectURIs = "redirect_uris"
        case jwks
    }

    /// A client that never sends anyone to sign in (client credentials) may list no redirect URI.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        clientID = try c.decode(String.self, forKey: .clientID)
        clientSecret = try c.decodeIfPresent(String.self, forKey: .clientSecret)
        name = try c.decode(String.self, forKey: .name)
        redirectURIs = try c.decodeIfPresent([String].self, forKey: .redirectURIs) ?? []
        jwks = try c.decodeIfPresent([[String: String]].self, forKey: .jwks)
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
