import FoundationEssentials

/// Where an `id_jag` session's ID-JAGs come from: the organisation's identity provider's sign-in.
public struct EnterpriseSource: Sendable {
    /// An ID-JAG for the authorization server `audience` and the MCP server `resource`, for `scopes` (`Provider.idJAG`).
    public let assertion: @Sendable (_ audience: String, _ resource: URL, _ scopes: [String]) async throws -> String
    /// Who is signed in there now (`Provider.personSignedIn`); nil: nobody.
    public let person: @Sendable () async -> String?

    public init(
        assertion: @escaping @Sendable (_ audience: String, _ resource: URL, _ scopes: [String]) async throws -> String,
        person: @escaping @Sendable () async -> String?
    ) {
        self.assertion = assertion
        self.person = person
    }
}

extension AuthSession {
    /// A token had with nobody involved (`ProviderConfiguration.Grant.mints`), under the refresh lock:
    /// one another process got meanwhile and that lasts `margin` more, else one minted now. Kept as a
    /// sign-in's token is, so that the agent and `latchkey token` share it rather than each asking.
    func renewMinted(_ held: Token?, margin: TimeInterval, started: Int) async throws -> Token {
        if let stored = try? await inOrder({ store, id in try await store.load(for: id) }), generation == started,
            stored.issuedBy == configuration.tokenBinding, stored.accessToken != held?.accessToken,
            margin != .infinity, !stored.expires(within: max(margin, renewalMargin(for: stored)), now: now()), await servable(stored)
        {
            token = stored
            return stored
        }
        let fresh = try await mint()
        if generation != started, let current = try superseded(since: started) { return current }
        await adopt(fresh)
        return fresh
    }

    /// A new token for `narrowing` (its scopes, else the provider file's; its resource, else the file's):
    /// the client's own (client credentials), or one an ID-JAG from the identity provider is traded for.
    func mint(_ narrowing: Narrowing = Narrowing()) async throws -> Token {
        switch configuration.grant {
        case .clientCredentials:
            return try await tokenClient.clientCredentials(narrowing, now: now())
        case .idJAG:
            guard let enterprise, let resource = narrowing.resource ?? configuration.resource else {
                throw OAuthError.invalidConfiguration(
                    "\(configuration.displayName) is reached through the identity provider “\(configuration.identityProvider ?? "?")”, which is not set up here."
                )
            }
            let audience = configuration.issuer?.absoluteString ?? configuration.tokenEndpoint.absoluteString
            let scopes = narrowing.scopes.isEmpty ? configuration.scopes : narrowing.scopes
            let person = await enterprise.person()
            let assertion = try await enterprise.assertion(audience, resource, scopes)
            var token = try await tokenClient.jwtBearer(assertion, scopes: scopes, now: now())
            token.heldFor = person
            return token
        case .authorizationCode:
            throw OAuthError.signedOut(reason: "You are not signed in to \(configuration.displayName).")
        }
    }

    /// Whether `token` may be served: with the `id_jag` grant, only while the identity provider's
    /// sign-in it was had through is the one there (not after a sign-out, nor to the next person).
    func servable(_ token: Token) async -> Bool {
        guard configuration.grant == .idJAG, token.refreshToken == nil else { return true }
        guard let person = await enterprise?.person() else { return false }
        return token.heldFor == person
    }
}
