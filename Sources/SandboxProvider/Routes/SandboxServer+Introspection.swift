import Foundation
import HTTPTypes
import Hummingbird

// Token introspection: what an access token is good for, as a resource server asks it.
extension SandboxServer {
    // MARK: Introspection (RFC 7662)

    static let introspectionPath = "/introspect"

    /// `active` and, for an active access token of the asking client's, its scopes, audience,
    /// subject and expiry: how a test (or a resource server) learns what a token a program was
    /// handed can do. A refresh token, or another client's token, is not active (§2.2).
    func introspect(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        let (client, token): (SandboxClient, String)
        switch try await tokenOfAuthenticatedClient(request) {
        case .asked(let asked): (client, _, token) = asked
        case .refused(let response): return response
        }
        guard case .valid(let grant, let scopes, let resource, let expiresAt) = await state.checkAccessToken(token),
            grant.clientID == client.clientID
        else {
            return Self.json(.ok, ["active": false], headers: Self.noStore)
        }
        var answer: [String: Any] = [
            "active": true, "scope": scopes.joined(separator: " "), "client_id": grant.clientID, "token_type": "Bearer",
            "exp": Int(expiresAt.timeIntervalSince1970), "iss": grant.issuer ?? issuer,
        ]
        // A person's token names them; a client's own (client credentials, no user) names the client.
        if grant.username.isEmpty {
            answer["sub"] = grant.clientID
        } else if let user = configuration.user(grant.username) {
            (answer["sub"], answer["username"]) = (Self.subject(for: user), user.username)
        } else {
            return Self.json(.ok, ["active": false], headers: Self.noStore)
        }
        if let resource { answer["aud"] = resource }
        if let key = grant.dpopKey, accessTokensBound(grant) { (answer["cnf"], answer["token_type"]) = (["jkt": key], "DPoP") }
        return Self.json(.ok, answer, headers: Self.noStore)
    }

    func addIntrospection(to router: Router<SandboxRequestContext>) {
        router.post(RouterPath(Self.introspectionPath)) { request, context in try await self.introspect(request, context) }
    }
}
