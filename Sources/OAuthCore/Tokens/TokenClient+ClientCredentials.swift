import FoundationEssentials

extension TokenClient {
    /// RFC 6749 §4.4: a token in the client's own name, for `narrowing` (its scopes, else the
    /// provider file's; its resource, else the file's), the client proving itself as the file says
    /// (a secret, or a JWT its key signs). Nobody signs in, and nothing is kept for later but the
    /// token: a refresh token, should the server send one (§4.4.3 says it should not), is dropped,
    /// since the grant itself is asked again when the token ends.
    public func clientCredentials(_ narrowing: Narrowing = Narrowing(), now: Date = Date()) async throws -> Token {
        var parameters = [("grant_type", "client_credentials")]
        let scopes = narrowing.scopes.isEmpty ? configuration.scopes : narrowing.scopes
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: " "))) }
        if let resource = narrowing.resource ?? configuration.resource { parameters.append(("resource", resource.absoluteString)) }
        logger.info("Asking for a token in the client's own name", metadata: ["endpoint": "\(configuration.tokenEndpoint.host ?? "?")"])
        return try await minted(parameters, secrets: [], now: now)
    }

    /// A token asked for with nobody involved (`parameters` name the grant), bound to a key of its own
    /// where the provider binds tokens, and kept alone: no refresh token, no ID token (the grant is
    /// asked again when it ends).
    func minted(_ parameters: [(String, String)], secrets: [String?], now: Date) async throws -> Token {
        let key = configuration.dpop ? DPoPKey() : nil
        let answer = try await post(parameters, to: configuration.tokenEndpoint, endpoint: .token, secrets: secrets, dpop: key)
        var token = try TokenResponse.token(
            from: answer, secrets: secrets + clientSecrets, errorAliases: configuration.errorAliases, now: now)
        try Self.checkBinding(token, proved: key)
        token.dpopKey = key?.stored
        (token.refreshToken, token.refreshExpiresAt, token.idToken) = (nil, nil, nil)
        token.signedInAt = token.receivedAt
        token.issuedBy = configuration.tokenBinding
        logger.info("Token received", metadata: ["token": "\(token)"])
        return token
    }
}
