import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

// Token revocation.
extension SandboxServer {
    // MARK: Revocation (RFC 7009)

    func revoke(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        await state.count(\.revocationRequests)
        if let response = try await applyFault(.revoke, context) { return response }
        let (client, parameters, token): (SandboxClient, Parameters, String)
        switch try await tokenOfAuthenticatedClient(request) {
        case .asked(let asked): (client, parameters, token) = asked
        case .refused(let response): return response
        }
        if let hint = parameters["token_type_hint"], !["access_token", "refresh_token"].contains(hint) {
            return SandboxRefusal.oauth("unsupported_token_type", "token_type_hint must be access_token or refresh_token.").response
        }
        if let (_, owner) = await state.find(token: token) {
            guard owner == client.clientID else {
                return SandboxRefusal.oauth("unauthorized_client", "The token was issued to another client.").response
            }
            await state.revoke(token: token)
        }
        // An unknown token is "revoked" already: 200 either way (RFC 7009 §2.2).
        return Response(status: .ok, headers: Self.noStore)
    }

    /// What revocation and introspection are asked (RFC 7009 §2.1, RFC 7662 §2.1): a form from an
    /// authenticated client, naming a `token`.
    func tokenOfAuthenticatedClient(_ request: Request) async throws -> TokenAsked {
        guard let parameters = try await Self.formBody(request) else {
            return .refused(SandboxRefusal.oauth("invalid_request", "The body must be application/x-www-form-urlencoded.").response)
        }
        switch await authenticateClient(request, parameters) {
        case .success(let client):
            guard let token = parameters["token"] else {
                return .refused(SandboxRefusal.oauth("invalid_request", "token is missing.").response)
            }
            return .asked((client, parameters, token))
        case .failure(let error): return .refused(error.response)
        }
    }

    enum TokenAsked {
        case asked((SandboxClient, Parameters, String))
        case refused(Response)
    }

    /// Where the imitated provider has one.
    func addRevocation(to router: Router<SandboxRequestContext>) {
        if let revokePath = likeness.revokePath {
            router.post(RouterPath(revokePath)) { request, context in try await self.revoke(request, context) }
        }
    }
}
