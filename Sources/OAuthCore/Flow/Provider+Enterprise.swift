import FoundationEssentials

extension Provider {
    /// As the organisation's identity provider: an ID-JAG for the MCP server `resource` (whose
    /// authorization server is `audience`), for `scopes`, from the sign-in in use here. Its ID token
    /// goes in exchange, renewed first when it has ended or is about to (a refresh brings a new one);
    /// without a current one, the person signs in here again. A refusal is said in a sentence that
    /// names this provider and the server.
    public func idJAG(audience: String, resource: URL, scopes: [String]) async throws -> String {
        guard configuration.authProtocol == .oauth2, configuration.isOpenIDConnect, !configuration.grant.mints else {
            throw OAuthError.invalidConfiguration(
                "\(configuration.displayName) is named as an identity provider, but people do not sign in there with OpenID Connect.")
        }
        let session = self.session
        var token = try await session.freshToken()
        // Renewed for its ID token only where it can be: a sign-in that cannot be renewed is kept as it
        // is (its access token may still serve), and the person is asked to sign in again.
        if !Self.current(token.idToken), token.canRefresh { token = try await session.renewedToken() }
        guard let idToken = token.idToken, Self.current(idToken) else {
            throw OAuthError.signedOut(
                reason:
                    "Your sign-in at \(configuration.displayName) holds no current ID token, which the MCP server's token is had with. Sign in there again."
            )
        }
        do {
            return try await tokenClient.idJAG(for: idToken, audience: audience, resource: resource, scopes: scopes)
        } catch OAuthError.invalidGrant {
            throw OAuthError.signedOut(
                reason:
                    "\(configuration.displayName), your organisation's identity provider, no longer accepts your sign-in there. Sign in there again."
            )
        } catch OAuthError.tokenEndpoint(let code, let description)
            where ["access_denied", "invalid_target", "unauthorized_client"].contains(code)
        {
            // Signed out of the server, as far as its token goes: where it has a sign-in of its own, that is the way left.
            throw OAuthError.signedOut(
                reason:
                    "\(configuration.displayName), your organisation's identity provider, does not let you use \(Redaction.printable(resource.absoluteString))"
                    + (description.map { ": \(Redaction.printable($0))" } ?? ".")
            )
        }
    }

    /// Who is signed in here now, as a minted token remembers it: this provider and the person's
    /// `sub` (hashed: nothing of the person is kept beside another server's token); nil: nobody.
    public func personSignedIn() async -> String? {
        guard let subject = IDTokenClaims.subject(of: await session.currentToken()?.idToken) else { return nil }
        return configuration.id + " " + Hex.sha256(subject)
    }

    /// Whether an ID token lasts another minute (its `exp`); unreadable is not current.
    static func current(_ idToken: String?, now: Date = Date()) -> Bool {
        guard let expiry = idToken.flatMap(IDTokenClaims.claims(of:))?["exp"]?.numberText.flatMap(Double.init) else { return false }
        return expiry > now.timeIntervalSince1970 + 60
    }
}
