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
        guard let parameters = try await Self.formBody(request) else {
            return SandboxRefusal.oauth("invalid_request", "The body must be application/x-www-form-urlencoded.").response
        }
        let client: SandboxClient
        switch await authenticateClient(request, parameters) {
        case .success(let authenticated): client = authenticated
        case .failure(let error): return error.response
        }
        guard let token = parameters["token"] else {
            return SandboxRefusal.oauth("invalid_request", "token is missing.").response
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

    /// Where the imitated provider has one.
    func addRevocation(to router: Router<SandboxRequestContext>) {
        if let revokePath = likeness.revokePath {
            router.post(RouterPath(revokePath)) { request, context in try await self.revoke(request, context) }
        }
    }
}
