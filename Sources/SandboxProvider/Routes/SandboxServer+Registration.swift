import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

// Dynamic client registration (RFC 7591) and reading a registration back (RFC 7592 §2.1).
extension SandboxServer {
    static let registrationPath = "/register"

    func addRegistration(to router: Router<SandboxRequestContext>) {
        guard likeness.offersRegistration else { return }
        router.post(RouterPath(Self.registrationPath)) { request, _ in try await self.register(request) }
        router.get(RouterPath(Self.registrationPath + "/:client")) { request, context in
            await self.readRegistration(request, clientID: context.parameters.get("client") ?? "")
        }
        router.delete("/_admin/clients") { _, _ in
            await self.state.forgetRegistrations()
            return Response(status: .noContent)
        }
    }

    func register(_ request: Request) async throws -> Response {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            return SandboxRefusal.oauth("invalid_client_metadata", "The request body must be JSON (application/json).").response
        }
        let body = try await request.body.collect(upTo: 64 * 1024)
        guard let metadata = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] else {
            return SandboxRefusal.oauth("invalid_client_metadata", "The request body is not a JSON object.").response
        }
        guard let redirectURIs = metadata["redirect_uris"] as? [String], !redirectURIs.isEmpty else {
            return SandboxRefusal.oauth("invalid_redirect_uri", "redirect_uris must be a non-empty array of URIs.").response
        }
        for uri in redirectURIs {
            if let reason = Self.unacceptableRedirectURI(uri) {
                return SandboxRefusal.oauth("invalid_redirect_uri", "\(uri): \(reason)").response
            }
        }
        // RFC 7591 §2: the defaults when a field is absent.
        let method = metadata["token_endpoint_auth_method"] ?? "client_secret_basic"
        guard let method = method as? String, ["none", "client_secret_basic", "client_secret_post"].contains(method) else {
            return SandboxRefusal.oauth(
                "invalid_client_metadata", "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post."
            ).response
        }
        let grantTypes = metadata["grant_types"] ?? ["authorization_code"]
        guard let grantTypes = grantTypes as? [String], !grantTypes.isEmpty,
            grantTypes.allSatisfy(["authorization_code", "refresh_token"].contains), grantTypes.contains("authorization_code")
        else {
            return SandboxRefusal.oauth(
                "invalid_client_metadata", "grant_types may hold authorization_code and refresh_token only, and must hold the first."
            ).response
        }
        let responseTypes = metadata["response_types"] ?? ["code"]
        guard let responseTypes = responseTypes as? [String], responseTypes == ["code"] else {
            return SandboxRefusal.oauth("invalid_client_metadata", "response_types must be [\"code\"]: only the code flow is offered.")
                .response
        }
        let applicationType = metadata["application_type"] ?? "web"
        guard let applicationType = applicationType as? String, ["web", "native"].contains(applicationType) else {
            return SandboxRefusal.oauth("invalid_client_metadata", "application_type must be web or native.").response
        }
        if let name = metadata["client_name"], !(name is String) {
            return SandboxRefusal.oauth("invalid_client_metadata", "client_name must be a string.").response
        }
        let name = (metadata["client_name"] as? String).flatMap { $0.isEmpty ? nil : String($0.prefix(100)) } ?? "An unnamed application"
        let clientID = "sbx_client_" + Base64URL.randomToken(bytes: 12)
        let secret = method == "none" ? nil : "sbx_secret_" + Base64URL.randomToken()
        let accessToken = "sbx_reg_" + Base64URL.randomToken()
        let registration = SandboxState.Registration(
            client: SandboxClient(clientID: clientID, clientSecret: secret, name: name, redirectURIs: redirectURIs),
            accessTokenHash: Self.hash(accessToken), issuedAt: Date(), applicationType: applicationType,
            authenticationMethod: method, grantTypes: grantTypes, issuer: issuer)
        await state.register(registration)
        var answer = describe(registration)
        answer["registration_access_token"] = accessToken
        return Self.json(.created, answer, headers: Self.noStore)
    }

    /// RFC 7592 §2.1: the registration, for its own access token only. A client
    /// that is not known (any more) gets 401 too, so a forgotten one is told the same way.
    /// Each read replaces the registration access token (§3): a client must keep the new one.
    func readRegistration(_ request: Request, clientID: String) async -> Response {
        let invalid = Response(
            status: .unauthorized, headers: [.wwwAuthenticate: #"Bearer error="invalid_token""#, .cacheControl: "no-store"])
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer "),
            let registration = await state.registration(clientID),
            constantTimeEquals(
                registration.accessTokenHash, Self.hash(header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)))
        else { return invalid }
        let next = "sbx_reg_" + Base64URL.randomToken()
        await state.replaceRegistrationToken(of: clientID, hash: Self.hash(next))
        var answer = describe(registration)
        answer["registration_access_token"] = next
        return Self.json(.ok, answer, headers: Self.noStore)
    }

    private func describe(_ registration: SandboxState.Registration) -> [String: Any] {
        var answer: [String: Any] = [
            "client_id": registration.client.clientID,
            "client_id_issued_at": Int(registration.issuedAt.timeIntervalSince1970),
            "client_name": registration.client.name,
            "redirect_uris": registration.client.redirectURIs,
            "token_endpoint_auth_method": registration.authenticationMethod,
            "grant_types": registration.grantTypes,
            "response_types": ["code"],
            "application_type": registration.applicationType,
            "registration_client_uri": "\(base)\(Self.prefix)\(Self.registrationPath)/\(registration.client.clientID)",
        ]
        if let secret = registration.client.clientSecret {
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        }
        return answer
    }

    /// Why a redirect URI cannot be registered, or nil when it can: absolute, no
    /// fragment (RFC 6749 §3.1.2), and plain http only to this computer (RFC 8252 §7.3).
    static func unacceptableRedirectURI(_ uri: String) -> String? {
        guard let parts = URLComponents(string: uri), let scheme = parts.scheme?.lowercased() else {
            return "not an absolute URI."
        }
        if parts.fragment != nil { return "a redirect URI has no fragment." }
        switch scheme {
        case "https":
            return (parts.host ?? "").isEmpty ? "an https URI needs a host." : nil
        case "http":
            return SandboxClient.isLoopbackHTTP(uri) ? nil : "plain http only to this computer (127.0.0.1 or [::1])."
        case "javascript", "data", "file", "about":
            return "\(scheme): cannot be a redirect URI."
        default:
            // A private-use scheme (RFC 8252 §7.1): reverse domain name, so with a dot.
            return scheme.contains(".") ? nil : "a private-use scheme must be a reverse domain name (com.example.app:/…)."
        }
    }

    private static func hash(_ text: String) -> String { Base64URL.encode(SHA256.hash(data: Data(text.utf8))) }
}
