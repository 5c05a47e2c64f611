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
    /// The longest a code is waited for, whatever the provider says: an hour (GitHub's and
    /// Microsoft's live 15 minutes, Google's 30), so that a script is never held for good.
    static let longestLifetime: TimeInterval = 3600
    /// The longest pause after network trouble (§3.5's backoff doubles it up to this).
    static let longestBackoff = 60
}

extension DeviceAuthorization: CustomReflectable {
    /// Without the device code, which `dump` would otherwise show.
    public var customMirror: Mirror {
        Mirror(self, children: ["userCode": userCode, "verificationURI": verificationURI, "expiresAt": expiresAt, "interval": interval])
    }
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
        let authorization = try Self.deviceAuthorization(fields, now: now)
        guard Self.isProvidersOwn(authorization.verificationURI, configuration) else {
            throw OAuthError.deviceVerificationElsewhere(
                host: Redaction.printable(authorization.verificationURI.host ?? "?"), provider: configuration.displayName)
        }
        return authorization
    }

    /// Whether the person may be sent to `url` to type a code: a host the provider file names
    /// (`device_verification_hosts`; the presets pin theirs), else one of the hosts of the
    /// provider's own endpoints or issuer. Device-code phishing sends a real provider's code to a page of the
    /// attacker's, with words that sound like Latchkey's: a host unlike the provider's is not shown.
    static func isProvidersOwn(_ url: URL, _ configuration: ProviderConfiguration) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        if !configuration.deviceVerificationHosts.isEmpty {
            return configuration.deviceVerificationHosts.contains { $0.lowercased() == host }
        }
        // Exactly the hosts of its own endpoints: a domain's other hosts may be other tenants' (okta.com,
        // auth0.com, github.io), so a preset pins more where its provider uses more.
        let own = [
            configuration.issuer, configuration.authorizationEndpoint, configuration.tokenEndpoint,
            configuration.deviceAuthorizationEndpoint,
        ]
        .compactMap { $0?.host?.lowercased() }
        return own.contains(host)
    }

    /// The device authorization endpoint's answer, checked: every field RFC 8628 §3.2 requires,
    /// addresses a browser may be sent to, and a wait between checks the code outlives.
    static func deviceAuthorization(_ fields: JSONValue, now: Date) throws -> DeviceAuthorization {
        func malformed(_ reason: String) -> OAuthError { .malformedResponse(endpoint: .deviceAuthorization, reason: reason) }
        guard let deviceCode = fields["device_code"]?.string, !deviceCode.isEmpty else { throw malformed("no device_code") }
        // A code for a person to read and type (§6.1): letters, digits, dashes and spaces, short. Anything
        // else (a terminal's escape sequences, combining marks) never reaches the screen.
        guard let userCode = fields["user_code"]?.string, (1...32).contains(userCode.count),
            userCode.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == " ") })
        else {
            throw malformed("no usable user_code")
        }
        // Google names it verification_url, as drafts of RFC 8628 did.
        let address = (fields["verification_uri"] ?? fields["verification_url"])?.string
        guard let verification = address.flatMap(Self.shownAddress) else {
            throw malformed("no verification_uri that is an https address")
        }
        let complete = fields["verification_uri_complete"]?.string.flatMap(Self.shownAddress)
            .flatMap { $0.host == verification.host && $0.port == verification.port ? $0 : nil }
        guard let lifetime = TokenResponse.lifetime(fields["expires_in"]) else { throw malformed("no expires_in") }
        var interval = DeviceAuthorization.defaultInterval
        if let asked = TokenResponse.number(fields["interval"]), asked >= 1 {
            guard asked < min(lifetime, DeviceAuthorization.longestLifetime) else {
                throw OAuthError.deviceWaitOutlivesCode(interval: Int(min(asked, 1e12)), lifetime: Int(lifetime))
            }
            interval = Int(asked.rounded(.up))
        }
        return DeviceAuthorization(
            deviceCode: deviceCode, userCode: userCode, verificationURI: verification, verificationURIComplete: complete,
            expiresAt: now.addingTimeInterval(min(lifetime, DeviceAuthorization.longestLifetime)), interval: interval)
    }

    /// An address to show a person: https (or http on this computer), with a host, no user name
    /// (`https://github.com@evil.example` reads as GitHub), and not endless.
    static func shownAddress(_ text: String) -> URL? {
        guard text.count <= 512, let url = URL(string: text), ProviderConfiguration.isSecureOrLoopback(url),
            url.host?.isEmpty == false, url.user == nil, url.password == nil
        else { return nil }
        return url
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
        var backoff = 0
        // RFC 9449: the sign-in's key, proved at every poll; the tokens are bound to it.
        let key = configuration.dpop ? await DPoPKey.forNewSignIn().key : nil
        while true {
            let left = authorization.expiresAt.timeIntervalSince(now())
            guard left > 0 else { throw OAuthError.deviceCodeExpired }
            // Never past the code's end: a long interval (or backoff) ends with the code, not after it.
            let pause = min(max(authorization.interval, backoff), Int(left.rounded(.up)))
            do { try await wait(.seconds(pause)) } catch { throw OAuthError.cancelled }
            guard now() < authorization.expiresAt else { throw OAuthError.deviceCodeExpired }
            do {
                let answer = try await post(
                    [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", authorization.deviceCode)],
                    to: configuration.tokenEndpoint, endpoint: .token, secrets: secrets, dpop: key)
                var token = try TokenResponse.token(
                    from: answer, secrets: secrets + clientSecrets, errorAliases: configuration.errorAliases, now: now())
                try Self.checkBinding(token, proved: key)
                token.dpopKey = key?.stored
                if let idToken = token.idToken {
                    // No nonce: the device flow has no authorization request to carry one.
                    try IDTokenClaims.validate(idToken, configuration: configuration, nonce: nil, now: now())
                    try await IDTokenSignature.verify(idToken, configuration: configuration, network: network)
                }
                token.signedInAt = token.receivedAt
                token.issuedBy = configuration.tokenBinding
                logger.info("Signed in on another device", metadata: ["token": "\(token)"])
                return token
            } catch OAuthError.tokenEndpoint(let code, _) where code == "authorization_pending" {
                backoff = 0
                continue
            } catch OAuthError.tokenEndpoint(let code, _) where code == "slow_down" {
                authorization.interval += DeviceAuthorization.defaultInterval
                logger.info("The provider asks to check less often", metadata: ["interval": "\(authorization.interval)"])
                continue
            } catch OAuthError.tokenEndpoint(let code, _) where code == "access_denied" {
                throw OAuthError.deviceSignInDenied
            } catch OAuthError.tokenEndpoint(let code, _) where code == "expired_token" {
                throw OAuthError.deviceCodeExpired
            } catch let error as OAuthError where error.isTransient {
                // §3.5: the network or the server had a moment: ask again, less often each time, until the code ends.
                backoff = min(max(authorization.interval, backoff) * 2, DeviceAuthorization.longestBackoff)
                logger.notice("Checking again later", metadata: ["error": "\(error)", "in": "\(backoff) s"])
            }
        }
    }
}
