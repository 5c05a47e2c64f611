import Foundation
import HTTPTypes
import Hummingbird

/// RFC 8628: the device authorization endpoint, the page where a person types the code, and
/// the token endpoint's device-code grant.
extension SandboxServer {
    static let devicePath = "/device_authorization"
    static let verificationPath = "/device"

    func addDevice(to router: Router<SandboxRequestContext>) {
        router.post(RouterPath(Self.devicePath)) { request, _ in try await self.deviceAuthorization(request) }
        router.get(RouterPath(Self.verificationPath)) { request, _ in
            let parameters = Parameters(FormEncoding.decode(request.uri.query ?? "") ?? [])
            return Self.html(.ok, Pages.device(userCode: parameters["user_code"] ?? "", action: Self.verificationPath))
        }
        router.post(RouterPath(Self.verificationPath)) { request, _ in try await self.answerDevice(request) }
    }

    /// §3.1–3.2: a device code for the client, with the address and code a person uses.
    private func deviceAuthorization(_ request: Request) async throws -> Response {
        await state.count(\.deviceAuthorizations)
        let (client, parameters): (SandboxClient, Parameters)
        switch try await authenticatedForm(request) {
        case .refused(let answer): return answer
        case .accepted(let form): (client, parameters) = form
        }
        let scopes = (parameters["scope"] ?? "").split(separator: " ").map(String.init)
        if let unknown = scopes.first(where: { !likeness.scopes.contains($0) }) {
            return SandboxRefusal.oauth("invalid_scope", "The scope \(unknown) is not offered.").response
        }
        let configuration = self.configuration
        let (deviceCode, userCode) = await state.addDevice(
            .init(
                clientID: client.clientID, userCode: SandboxState.newUserCode(), scopes: scopes, resource: parameters["resource"],
                grantsRefreshToken: likeness.grantsRefreshToken(scopes: scopes, parameters: parameters.values),
                expiresAt: Date().addingTimeInterval(TimeInterval(configuration.deviceCodeTTL)), interval: configuration.deviceInterval))
        let verification = base + Self.verificationPath
        return Self.json(
            .ok,
            [
                "device_code": deviceCode, "user_code": userCode, "verification_uri": verification,
                "verification_uri_complete": "\(verification)?user_code=\(userCode)", "expires_in": configuration.deviceCodeTTL,
                "interval": configuration.deviceInterval,
            ], headers: Self.noStore)
    }

    /// The verification page's answer: the code, who signs in, Allow or Deny.
    private func answerDevice(_ request: Request) async throws -> Response {
        let body = try await Self.formBody(request)
        let typed = body?["user_code"] ?? ""
        guard let body, let (deviceCode, _) = await state.device(userCode: typed) else {
            return Self.html(
                .badRequest,
                Pages.device(
                    userCode: typed, action: Self.verificationPath, error: "That code is not known, or has expired. Check it and try again."
                ))
        }
        guard body["action"] == "allow" else {
            await state.answerDevice(deviceCode, allowedBy: nil)
            return Self.html(.ok, Pages.deviceDone(allowed: false))
        }
        let username = body["username"] ?? ""
        guard let user = configuration.user(username), constantTimeEquals(user.password, body["password"] ?? "") else {
            return Self.html(
                .unauthorized,
                Pages.device(
                    userCode: typed, action: Self.verificationPath, username: username,
                    error: "That username and password do not match. Try again."))
        }
        await state.answerDevice(deviceCode, allowedBy: user.username)
        return Self.html(.ok, Pages.deviceDone(allowed: true))
    }

    /// The token endpoint's `urn:ietf:params:oauth:grant-type:device_code` (§3.4–3.5).
    /// `key`: the DPoP key the poll proved, which the tokens are bound to (RFC 9449 §5).
    func deviceToken(_ parameters: Parameters, client: SandboxClient, key: String?) async -> TokenOutcome {
        await state.count(\.devicePolls)
        guard let deviceCode = parameters["device_code"] else { return .error("invalid_request", "device_code is missing.") }
        switch await state.pollDevice(deviceCode, clientID: client.clientID) {
        case .unknown: return .error("invalid_grant", "The device code is not known.")
        case .otherClient: return .error("invalid_grant", "The device code was issued to another client.")
        case .expired: return .error("expired_token", "The device code has expired.")
        case .pending: return .error("authorization_pending", "The person has not answered yet.")
        case .slowDown: return .error("slow_down", "Checking too often: wait five seconds more between checks.")
        case .denied: return .error("access_denied", "The person refused.")
        case .allowed(let device, let username):
            var grant = SandboxState.Grant(
                clientID: client.clientID, username: username, scopes: device.scopes, resource: device.resource, issuer: issuer)
            grant.dpopKey = key
            let issued = await state.issueTokens(for: grant, ttl: configuration.accessTokenTTL, refreshTTL: configuration.refreshTokenTTL)
            return tokenResponse(issued, grant: grant, nonce: nil, withRefreshToken: device.grantsRefreshToken)
        }
    }
}
