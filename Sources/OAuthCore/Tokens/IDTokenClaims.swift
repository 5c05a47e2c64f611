import FoundationEssentials

/// Checks an ID token's claims (OpenID Connect Core §3.1.3.7).
///
/// The token came straight from the token endpoint over TLS, which step 6 of
/// that section accepts in place of checking the signature; the claims that tie
/// it to this sign-in — issuer, audience, expiry and nonce — are checked here.
enum IDTokenClaims {
    static let allowedClockSkew: TimeInterval = 300

    /// The payload of a compact JWS, unchecked; nil when it is not one.
    static func claims(of idToken: String) -> JSONValue? {
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]) else { return nil }
        return JSONValue.object(parsing: payload)
    }

    /// The person an ID token is about (`sub`), unchecked.
    static func subject(of idToken: String?) -> String? {
        idToken.flatMap(claims(of:))?["sub"]?.string
    }

    /// `previous`: the ID token of the sign-in, when this one came with a refresh.
    static func validate(
        _ idToken: String, configuration: ProviderConfiguration, nonce: String?, now: Date, previous: String? = nil
    ) throws {
        guard let claims = claims(of: idToken) else {
            throw OAuthError.invalidIDToken("it is not a JSON Web Token")
        }
        if let expected = try expectedIssuer(configuration, claims: claims) {
            guard let issuer = claims["iss"]?.string, Issuer.normalised(issuer) == Issuer.normalised(expected) else {
                throw OAuthError.invalidIDToken("it was issued by someone else")
            }
        }
        let audiences: [String] = claims["aud"]?.strings ?? [claims["aud"]?.string].compactMap { $0 }
        guard audiences.contains(configuration.clientID) else {
            throw OAuthError.invalidIDToken("it was issued for another application")
        }
        // OIDC Core §3.1.3.7 (4, 5): with several audiences the authorized party must be
        // named, and whenever it is named it must be this application.
        if let azp = claims["azp"] {
            guard azp.string == configuration.clientID else {
                throw OAuthError.invalidIDToken("it was issued for another application")
            }
        } else if audiences.count > 1 {
            throw OAuthError.invalidIDToken("it names several applications and not which one it is for")
        }
        guard let subject = claims["sub"]?.string, !subject.isEmpty else {
            throw OAuthError.invalidIDToken("it does not say whom it is about")
        }
        // OIDC Core §12.2: a refreshed ID token is about the same person, from the same issuer.
        if let previous, let earlier = Self.claims(of: previous) {
            guard subject == earlier["sub"]?.string else {
                throw OAuthError.invalidIDToken("it is about someone other than the person who signed in")
            }
            // Both from the provider: exactly the same string (OIDC Core §12.2), no normalising.
            if let issuer = earlier["iss"]?.string, claims["iss"]?.string != issuer {
                throw OAuthError.invalidIDToken("it was issued by someone else")
            }
        }
        guard let exp = TokenResponse.number(claims["exp"]), Date(timeIntervalSince1970: exp + allowedClockSkew) > now else {
            throw OAuthError.invalidIDToken("it has expired (is this computer's clock right?)")
        }
        if let nonce {
            guard let sent = claims["nonce"]?.string, constantTimeEquals(sent, nonce) else {
                throw OAuthError.invalidIDToken("it does not belong to this sign-in")
            }
        }
    }

    /// The issuer the token must name: `id_token_issuer` with its placeholders
    /// filled from the token's own claims (only with values that cannot reach
    /// past one path segment), else `issuer`. Nil when the provider states none.
    static func expectedIssuer(_ configuration: ProviderConfiguration, claims: JSONValue) throws -> String? {
        guard var template = configuration.idTokenIssuer else { return configuration.issuer?.absoluteString }
        for (placeholder, claim) in ProviderConfiguration.issuerPlaceholders where template.contains(placeholder) {
            guard let value = claims[claim]?.string, !value.isEmpty,
                value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            else {
                throw OAuthError.invalidIDToken("it does not say which \(claim == "tid" ? "tenant" : claim) issued it")
            }
            template = template.replacing(placeholder, with: value)
        }
        return template
    }
}
