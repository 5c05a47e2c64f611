import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Enterprise-Managed Authorization (the MCP ext-auth extension): the sandbox plays either side.
// As the organisation's identity provider, it exchanges a person's ID token for an ID-JAG (RFC 8693,
// `requested_token_type` id-jag), as its policy allows; as an MCP server's authorization server
// (`--trust-idp`), it takes such an ID-JAG in the JWT bearer grant (RFC 7523) and issues a token for
// that server alone, with no refresh token.
extension SandboxServer {
    static let idJAGType = "urn:ietf:params:oauth:token-type:id-jag"
    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let idJAGProfile = "urn:ietf:params:oauth:grant-profile:id-jag"
    /// How long an ID-JAG lives: minutes, as the extension asks.
    static let idJAGLifetime = 300

    // MARK: The identity provider's side

    func mintIDJAG(_ parameters: Parameters, client: SandboxClient, now: Date = Date()) async -> TokenOutcome {
        guard parameters["subject_token_type"] == Self.idTokenType, let subject = parameters["subject_token"] else {
            return .error("invalid_request", "An ID-JAG is exchanged for an ID token: subject_token_type must be \(Self.idTokenType).")
        }
        guard let audience = parameters["audience"], let resource = parameters["resource"] else {
            return .error("invalid_request", "audience (the MCP server's authorization server) and resource (the MCP server) are needed.")
        }
        // The ID token: this provider's, for this client, not expired.
        guard case .success(let idToken) = JWSCheck.verified(subject, keys: signer.publicKeys, what: "ID token"),
            idToken.claims["iss"] as? String == tokenIssuer, idToken.isFor([client.clientID]),
            let expiry = idToken.time("exp"), expiry > now.timeIntervalSince1970,
            let sub = idToken.claims["sub"] as? String, let user = configuration.users.first(where: { Self.subject(for: $0) == sub })
        else { return .error("invalid_grant", "The subject token is not a current ID token this provider gave this client.") }
        let policy = await state.idJAGPolicy
        guard
            let line = policy.first(where: {
                $0.allows(user: user.username, client: client.clientID, audience: audience, resource: resource)
            })
        else {
            return .error("access_denied", "Your organisation's policy does not let \(user.username) use \(resource) from this app.")
        }
        let asked = parameters["scope"].map { $0.split(separator: " ").map(String.init) }
        let scopes = asked.map { $0.filter(line.scopes.contains) } ?? line.scopes
        if let asked, !asked.isEmpty, scopes.isEmpty {
            return .error("invalid_scope", "The policy allows none of the scopes asked for at \(resource).")
        }
        let issued = Int(now.timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": tokenIssuer, "sub": sub, "aud": audience, "resource": resource, "client_id": line.clientID,
            "scope": scopes.joined(separator: " "), "jti": Base64URL.randomToken(bytes: 16), "iat": issued,
            "exp": issued + Self.idJAGLifetime, "email": user.email,
        ]
        guard let jag = try? signer.sign(claims: claims, type: "oauth-id-jag+jwt") else {
            return .error("server_error", "The ID-JAG could not be signed.")
        }
        await state.count(\.idJAGsIssued)
        return .tokens([
            ("access_token", jag), ("issued_token_type", Self.idJAGType), ("token_type", "N_A"),
            ("expires_in", Self.idJAGLifetime), ("scope", scopes.joined(separator: " ")),
        ])
    }

    func addEnterpriseGrants(to router: Router<SandboxRequestContext>) {
        router.post("/_admin/id-jag-policy") { request, _ in
            let body = try await request.body.collect(upTo: 65536)
            guard let policy = try? JSONDecoder().decode([IDJAGPolicy].self, from: Data(buffer: body)) else {
                return Self.json(.badRequest, ["error": "a JSON array of policy lines"])
            }
            await self.state.setIDJAGPolicy(policy)
            return Response(status: .noContent)
        }
    }

    // MARK: The MCP server's authorization server's side

    func redeemIDJAG(_ parameters: Parameters, client: SandboxClient, key: String?, now: Date = Date()) async -> TokenOutcome {
        guard let trusted = configuration.trustedIdentityProvider else {
            return .error("unsupported_grant_type", "This server takes no ID-JAG.")
        }
        guard let assertion = parameters["assertion"], !assertion.isEmpty else { return .error("invalid_request", "assertion is missing.") }
        guard let keys = await identityProviderKeys(trusted) else {
            return .error("server_error", "The organisation's identity provider's keys could not be had.")
        }
        let jag: JWSCheck
        switch JWSCheck.verified(assertion, keys: keys, what: "ID-JAG") {
        case .failure(let refusal): return .error("invalid_grant", refusal.sentence)
        case .success(let checked): jag = checked
        }
        guard jag.header["typ"] as? String == "oauth-id-jag+jwt" else {
            return .error("invalid_grant", "The assertion is not an ID-JAG (typ).")
        }
        guard jag.claims["iss"] as? String == trusted else {
            return .error("invalid_grant", "The ID-JAG is not from the trusted identity provider.")
        }
        guard jag.isFor([issuer, issuer + "/"]) else { return .error("invalid_grant", "The ID-JAG is for another authorization server.") }
        let moment = now.timeIntervalSince1970
        guard let expiry = jag.time("exp"), expiry > moment - 30, expiry <= moment + 600 else {
            return .error("invalid_grant", "The ID-JAG has expired.")
        }
        guard jag.claims["client_id"] as? String == client.clientID else {
            return .error("invalid_grant", "The ID-JAG was issued for another client.")
        }
        guard let resource = jag.claims["resource"] as? String, protectedResource(identifiedBy: resource) != nil else {
            return .error("invalid_grant", "The ID-JAG names no MCP server of this authorization server.")
        }
        guard let jti = jag.claims["jti"] as? String, !jti.isEmpty,
            await state.firstUse(ofAssertion: "id-jag\u{0}" + jti, expiresAt: expiry + 30, now: now)
        else { return .error("invalid_grant", "The ID-JAG was used before.") }
        // The intersection of what was asked and what the ID-JAG allows (all it allows, unasked).
        let allowed = ((jag.claims["scope"] as? String) ?? "").split(separator: " ").map(String.init)
        let asked = parameters["scope"].map { $0.split(separator: " ").map(String.init) }
        let scopes = asked.map { $0.filter(allowed.contains) } ?? allowed
        if let asked, !asked.isEmpty, scopes.isEmpty {
            return .error("invalid_scope", "The ID-JAG allows none of the scopes asked for.")
        }
        // A person this server knows: an ID-JAG about nobody here is never taken for the client's own token.
        guard let user = configuration.users.first(where: { Self.subject(for: $0) == jag.claims["sub"] as? String }) else {
            return .error("invalid_grant", "The ID-JAG is about a person this server does not know.")
        }
        var grant = SandboxState.Grant(
            clientID: client.clientID, username: user.username, scopes: scopes, resource: resource, issuer: issuer)
        grant.dpopKey = key
        let issued = await state.issueTokens(for: grant, ttl: configuration.accessTokenTTL)
        await state.count(\.idJAGsRedeemed)
        return tokenResponse(issued, grant: grant, nonce: nil, withRefreshToken: false)
    }

    /// The public keys of the identity provider at `issuer`, from its discovery document's `jwks_uri`.
    private func identityProviderKeys(_ issuer: String) async -> [[String: Any]]? {
        func json(_ text: String) async -> [String: Any]? {
            guard let url = URL(string: text),
                let (data, _) = try? await URLSession.shared.data(for: URLRequest(url: url, timeoutInterval: 5))
            else { return nil }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
        guard let discovery = await json(issuer + "/.well-known/openid-configuration"), let jwksURI = discovery["jwks_uri"] as? String,
            let set = await json(jwksURI)
        else { return nil }
        return set["keys"] as? [[String: Any]]
    }
}
