import FoundationEssentials

/// A sign-in finished on another device (RFC 8628): the provider gives a short code and the
/// address where a person types it (on a phone, on a computer with a browser); meanwhile this
/// program asks the token endpoint, at the pace the provider sets, whether the person has answered.
///
/// The device code is a secret: it is never shown, logged or described. The user code is
/// meant to be read out and typed; it is shown.
public struct DeviceAuthorization: Sendable, CustomStringConvertible {
    let deviceCode: String
    /// What the person types at `verificationURI`.
    public let userCode: String
    /// Where the person goes.
    public let verificationURI: URL
    /// The same with the code in it, for a QR code or a link (RFC 8628 §3.3.1); nil when the provider has none.
    public let verificationURIComplete: URL?
    /// When the code stops working.
    public let expiresAt: Date
    /// Seconds between two checks: as the provider asked, 5 when it did not say (§3.2), more after each `slow_down`.
    public internal(set) var interval: Int

    public var description: String {
        "DeviceAuthorization(\(userCode) at \(verificationURI.absoluteString), every \(interval) s)"
    }

    /// The pause §3.2 gives a client told nothing, and after `slow_down` adds (§3.5).
    static let defaultInterval = 5
}

extension TokenClient {
    /// Asks the device authorization endpoint for a code (RFC 8628 §3.1–3.2), with the
    /// configuration's scopes (and resource), authenticated as the token endpoint is.
    public func startDeviceAuthorization(now: Date = Date()) async throws -> DeviceAuthorization {
        guard let endpoint = configuration.deviceAuthorizationEndpoint else {
            throw OAuthError.invalidConfiguration(
                "\(configuration.displayName) offers no sign-in on another device (no device_authorization_endpoint).")
        }
        var parameters: [(String, String)] = []
        if !configuration.scopes.isEmpty { parameters.append(("scope", configuration.scopes.joined(separator: " "))) }
        if let resource = configuration.resource { parameters.append(("resource", resource.absoluteString)) }
        logger.info("Asking for a code to sign in on another device", metadata: ["endpoint": "\(endpoint.host ?? "?")"])
        let answer = try await post(parameters, to: endpoint, endpoint: .deviceAuthorization, secrets: [])
        let fields = try TokenResponse.fields(
            of: answer, endpoint: .deviceAuthorization, secrets: clientSecrets, errorAliases: configuration.errorAliases)
        return try Self.deviceAuthorization(fields, now: now)
    }

    /// The device authorization endpoint's answer, checked: every field RFC 8628 §3.2 requires,
    /// addresses a browser may be sent to, and a wait between checks the code outlives.
    static func deviceAuthorization(_ fields: [String: Any], now: Date) throws -> DeviceAuthorization {
        func malformed(_ reason: String) -> OAuthError { .malformedResponse(endpoint: .deviceAuthorization, reason: reason) }
        guard let deviceCode = fields["device_code"] as? String, !deviceCode.isEmpty else { throw malformed("no device_code") }
        guard let userCode = (fields["user_code"] as? String).map(Redaction.printable), !userCode.isEmpty, userCode.count <= 64 else {
            throw malformed("no usable user_code")
        }
        // Google names it verification_url, as drafts of RFC 8628 did.
        let address = (fields["verification_uri"] ?? fields["verification_url"]) as? String
        guard let verification = address.flatMap(URL.init(string:)), ProviderConfiguration.isSecureOrLoopback(verification),
            verification.host?.isEmpty == false
        else {
            throw malformed("no verification_uri that is an https address")
        }
        let complete = (fields["verification_uri_complete"] as? String).flatMap(URL.init(string:))
            .flatMap { ProviderConfiguration.isSecureOrLoopback($0) && $0.host == verification.host ? $0 : nil }
        guard let lifetime = TokenResponse.lifetime(fields["expires_in"]) else { throw malformed("no expires_in") }
        var interval = DeviceAuthorization.defaultInterval
        if let asked = TokenResponse.number(fields["interval"]), asked >= 1 {
            guard asked < lifetime else {
                throw OAuthError.deviceWaitOutlivesCode(interval: Int(min(asked, 1e12)), lifetime: Int(lifetime))
            }
            interval = Int(asked)
        }
        return DeviceAuthorization(
            deviceCode: deviceCode, userCode: userCode, verificationURI: verification, verificationURIComplete: complete,
            expiresAt: now.addingTimeInterval(lifetime), interval: interval)
    }

    /// Asks the token endpoint until the person has answered on the other device (RFC 8628 §3.4–3.5):
    /// every `interval` seconds, five more after each `slow_down`; the token once they allowed it, a
    /// sentence when they refused, the code expired, or the task was cancelled. `wait` pauses
    /// (`Task.sleep`, by default: cancelling the task ends the wait at once).
    public func deviceToken(
        for authorization: DeviceAuthorization, now: @Sendable () -> Date = { Date() },
        wait: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) async throws -> Token {
        var authorization = authorization
        let secrets = [authorization.deviceCode]
        while true {
            guard now() < authorization.expiresAt else { throw OAuthError.deviceCodeExpired }
            do { try await wait(.seconds(authorization.interval)) } catch { throw OAuthError.cancelled }
            guard now() < authorization.expiresAt else { throw OAuthError.deviceCodeExpired }
            let answer = try await post(
                [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", authorization.deviceCode)],
                to: configuration.tokenEndpoint, endpoint: .token, secrets: secrets)
            do {
                var token = try TokenResponse.token(
                    from: answer, secrets: secrets + clientSecrets, errorAliases: configuration.errorAliases, now: now())
                if let idToken = token.idToken {
                    // No nonce: the device flow has no authorization request to carry one.
                    try IDTokenClaims.validate(idToken, configuration: configuration, nonce: nil, now: now())
                    try await IDTokenSignature.verify(idToken, configuration: configuration, network: network)
                }
                token.issuedBy = configuration.tokenBinding
                logger.info("Signed in on another device", metadata: ["token": "\(token)"])
                return token
            } catch OAuthError.tokenEndpoint(let code, _) where code == "authorization_pending" {
                continue
            } catch OAuthError.tokenEndpoint(let code, _) where code == "slow_down" {
                authorization.interval += DeviceAuthorization.defaultInterval
                logger.info("The provider asks to check less often", metadata: ["interval": "\(authorization.interval)"])
                continue
            } catch OAuthError.tokenEndpoint(let code, _) where code == "access_denied" {
                throw OAuthError.deviceSignInDenied
            } catch OAuthError.tokenEndpoint(let code, _) where code == "expired_token" {
                throw OAuthError.deviceCodeExpired
            }
        }
    }
}
