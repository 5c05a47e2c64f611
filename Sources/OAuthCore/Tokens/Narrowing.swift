import FoundationEssentials

/// What a program may have of a sign-in: some of its scopes, for one resource. A token made for it is
/// never the sign-in's own: it is handed to the program, and the sign-in keeps its token whole.
public struct Narrowing: Sendable, Hashable, CustomStringConvertible {
    /// Sorted, each once; empty: every scope of the sign-in.
    public let scopes: [String]
    /// The resource (RFC 8707) the token is for; nil: the sign-in's own.
    public let resource: URL?

    public init(scopes: [String] = [], resource: URL? = nil) {
        self.scopes = Array(Set(scopes.filter { !$0.isEmpty })).sorted()
        self.resource = resource
    }

    /// Asks for nothing less than the sign-in.
    public var isWhole: Bool { scopes.isEmpty && resource == nil }

    /// Whether a token for `self` gives no more than one for `other` may: its scopes among
    /// `other`'s (all of them when `other` names none), and the same resource: another resource is
    /// another API (a refresh token may reach several), never "less" than the sign-in's own.
    public func isWithin(_ other: Narrowing) -> Bool {
        let scopesWithin = other.scopes.isEmpty || (!scopes.isEmpty && Set(scopes).isSubset(of: other.scopes))
        return scopesWithin && resource == other.resource
    }

    /// The narrower of a program's ask and what it was allowed: what it asked, or else all it was allowed.
    public func within(_ allowed: Narrowing) -> Narrowing {
        Narrowing(scopes: scopes.isEmpty ? allowed.scopes : scopes, resource: resource ?? allowed.resource)
    }

    public var description: String {
        let scopes = self.scopes.isEmpty ? "all scopes" : self.scopes.joined(separator: " ")
        return resource.map { "\(scopes) for \($0.absoluteString)" } ?? scopes
    }
}

extension TokenClient {
    static let tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    /// RFC 8693: a token for `narrowing` in exchange for the sign-in's access token `subject`, which
    /// stays as it is. Whatever refresh token or ID token comes with it is dropped: a narrowed token
    /// is an access token, handed out, never the sign-in's.
    public func exchange(_ subject: Token, for narrowing: Narrowing, now: Date = Date()) async throws -> Token {
        var parameters = [
            ("grant_type", Self.tokenExchange), ("subject_token", subject.accessToken),
            ("subject_token_type", Self.accessTokenType), ("requested_token_type", Self.accessTokenType),
        ]
        if !narrowing.scopes.isEmpty { parameters.append(("scope", narrowing.scopes.joined(separator: " "))) }
        if let resource = narrowing.resource ?? configuration.resource { parameters.append(("resource", resource.absoluteString)) }
        logger.info("Exchanging the access token for a narrower one", metadata: ["endpoint": "\(configuration.tokenEndpoint.host ?? "?")"])
        let secrets = [subject.accessToken, subject.refreshToken]
        let key = try dpopKey(of: subject)
        let answer = try await post(parameters, to: configuration.tokenEndpoint, endpoint: .token, secrets: secrets, dpop: key)
        var token = try TokenResponse.token(
            from: answer, secrets: secrets + clientSecrets, errorAliases: configuration.errorAliases, now: now)
        try Self.checkBinding(token, proved: key)
        return narrowed(token: &token, narrowing)
    }

    /// A refresh for `narrowing` (RFC 6749 §6, RFC 8707 §2.2): the answer's access token is the
    /// narrowed one; its refresh token, where the provider rotated it, is the sign-in's from now on
    /// (the caller keeps it).
    public func refresh(_ token: Token, narrowedTo narrowing: Narrowing, now: Date = Date()) async throws -> (
        narrowed: Token, refreshToken: String?, refreshExpiresAt: Date?
    ) {
        guard let refreshToken = token.refreshToken, !refreshToken.isEmpty else {
            throw OAuthError.invalidGrant(description: "there is no refresh token")
        }
        var parameters = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if !narrowing.scopes.isEmpty { parameters.append(("scope", narrowing.scopes.joined(separator: " "))) }
        if let resource = narrowing.resource ?? configuration.resource { parameters.append(("resource", resource.absoluteString)) }
        logger.info("Refreshing for a narrower token", metadata: ["endpoint": "\(configuration.tokenEndpoint.host ?? "?")"])
        let secrets = [refreshToken, token.accessToken]
        let key = try dpopKey(of: token)
        let answer = try await post(parameters, to: configuration.tokenEndpoint, endpoint: .token, secrets: secrets, dpop: key)
        var fresh = try TokenResponse.token(
            from: answer, secrets: secrets + clientSecrets, errorAliases: configuration.errorAliases, now: now)
        try Self.checkBinding(fresh, proved: key)
        let (rotated, ends) = (fresh.refreshToken, fresh.refreshExpiresAt)
        return (narrowed(token: &fresh, narrowing), rotated, ends)
    }

    /// The token as handed out: no refresh token, no ID token; its scopes those asked where the
    /// answer names none (RFC 6749 §5.1: then they are the ones asked).
    private func narrowed(token: inout Token, _ narrowing: Narrowing) -> Token {
        token.refreshToken = nil
        token.idToken = nil
        token.dpopKey = nil
        (token.refreshExpiresAt, token.signedInAt) = (nil, nil)
        if token.scope == nil, !narrowing.scopes.isEmpty { token.scope = narrowing.scopes.joined(separator: " ") }
        token.issuedBy = configuration.tokenBinding
        return token
    }
}
