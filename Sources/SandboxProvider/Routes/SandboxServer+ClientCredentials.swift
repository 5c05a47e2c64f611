import Foundation

// RFC 6749 §4.4: a confidential client's token in its own name. No user, so no ID token; no refresh
// token (§4.4.3): the client asks again.
extension SandboxServer {
    func clientCredentials(_ parameters: Parameters, client: SandboxClient, key: String?) async -> TokenOutcome {
        guard !client.isPublic else {
            return .error("unauthorized_client", "A public client cannot get tokens in its own name: it has nothing to prove itself with.")
        }
        let scopes = (parameters["scope"] ?? "").split(separator: " ").map(String.init)
        if let personal = scopes.first(where: { ["openid", "offline_access"].contains($0) }) {
            return .error("invalid_scope", "\(personal) is about a person, and a client's own token has none.")
        }
        let resource = parameters["resource"]
        if let resource {
            guard let url = URL(string: resource), url.scheme != nil, url.fragment == nil else {
                return .error("invalid_target", "The resource must be an absolute URI without a fragment.")
            }
        }
        var grant = SandboxState.Grant(clientID: client.clientID, username: "", scopes: scopes, resource: resource, issuer: issuer)
        grant.dpopKey = key
        let issued = await state.issueTokens(for: grant, ttl: configuration.accessTokenTTL)
        await state.count(\.clientCredentialsGrants)
        return tokenResponse(issued, grant: grant, nonce: nil, withRefreshToken: false)
    }
}
