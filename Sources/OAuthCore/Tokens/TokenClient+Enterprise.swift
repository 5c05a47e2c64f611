import FoundationEssentials

/// Enterprise-Managed Authorization (the MCP ext-auth extension): the organisation's identity provider
/// gives, for the person's ID token, an ID-JAG (Identity Assertion JWT Authorization Grant) for one MCP
/// server; that server's authorization server trades it for a token (the JWT bearer grant, RFC 7523).
/// The person signs in once, at the identity provider, and sees no consent page per server.
extension TokenClient {
    static let idJAGType = "urn:ietf:params:oauth:token-type:id-jag"
    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// At the identity provider (this client's provider): an ID-JAG for the MCP server `resource`,
    /// whose authorization server is `audience`, for `scopes`, in exchange for `idToken` (RFC 8693).
    /// What comes back is checked before it goes anywhere: an ID-JAG for another server, or another
    /// MCP server, sent to this one would let this one use it there.
    public func idJAG(for idToken: String, audience: String, resource: URL, scopes: [String]) async throws -> String {
        var parameters = [
            ("grant_type", Self.tokenExchange), ("requested_token_type", Self.idJAGType), ("audience", audience),
            ("resource", resource.absoluteString), ("subject_token", idToken), ("subject_token_type", Self.idTokenType),
        ]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: " "))) }
        logger.info("Asking the identity provider for an ID-JAG", metadata: ["endpoint": "\(configuration.tokenEndpoint.host ?? "?")"])
        let answer = try await post(parameters, to: configuration.tokenEndpoint, endpoint: .token, secrets: [idToken])
        let fields = try TokenResponse.fields(
            of: answer, endpoint: .token, secrets: [idToken] + clientSecrets, errorAliases: configuration.errorAliases)
        guard fields["issued_token_type"]?.string == Self.idJAGType, let jag = fields["access_token"]?.string, !jag.isEmpty,
            TokenResponse.isVisibleASCII(jag), let claims = IDTokenClaims.claims(of: jag)
        else { throw OAuthError.malformedResponse(endpoint: .token, reason: "it did not answer with an ID-JAG") }
        let audiences = claims["aud"]?.string.map { [$0] } ?? claims["aud"]?.strings ?? []
        guard audiences.map(Issuer.normalised).contains(Issuer.normalised(audience)),
            claims["resource"]?.string == resource.absoluteString
        else {
            throw OAuthError.malformedResponse(
                endpoint: .token, reason: "its ID-JAG is for another server than \(Redaction.printable(resource.absoluteString))")
        }
        return jag
    }

    /// At an MCP server's authorization server (this client's provider): its token for `assertion`,
    /// an ID-JAG (RFC 7523 §2.1), for `scopes`. No refresh token is kept: a new ID-JAG is had when the
    /// token ends. A token with more scopes than were asked is refused (the answer is the intersection).
    public func jwtBearer(_ assertion: String, scopes: [String], now: Date = Date()) async throws -> Token {
        var parameters = [("grant_type", Self.jwtBearer), ("assertion", assertion)]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: " "))) }
        logger.info("Trading an ID-JAG for a token", metadata: ["endpoint": "\(configuration.tokenEndpoint.host ?? "?")"])
        let token = try await minted(parameters, secrets: [assertion], now: now)
        if !scopes.isEmpty, let given = token.scope, !Set(given.split(separator: " ").map(String.init)).isSubset(of: scopes) {
            throw OAuthError.malformedResponse(
                endpoint: .token, reason: "it gave more scopes than were asked for (\(Redaction.printable(given)))")
        }
        return token
    }
}
