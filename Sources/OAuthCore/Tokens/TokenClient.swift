import FoundationEssentials
import Logging

/// Talks to the token and revocation endpoints: code exchange (RFC 6749
/// §4.1.3), refresh (§6) and revocation (RFC 7009).
public struct TokenClient: Sendable {
    public let configuration: ProviderConfiguration
    /// The transport, how long a whole request may take, and the logger.
    public let network: Network
    public var transport: any HTTPTransport { network.transport }
    public var timeout: Double { network.timeout }
    var logger: Logger { network.logger }

    public init(configuration: ProviderConfiguration, network: Network = Network()) {
        self.configuration = configuration
        self.network = network
    }

    /// Exchanges the code for tokens and checks the ID token that comes with them.
    public func exchange(_ response: AuthorizationResponse, for request: AuthorizationRequest, now: Date = Date()) async throws
        -> Token
    {
        var parameters = [
            ("grant_type", "authorization_code"), ("code", response.code),
            ("redirect_uri", request.redirectURI.absoluteString),
        ]
        if let verifier = request.codeVerifier { parameters.append(("code_verifier", verifier)) }
        if let resource = configuration.resource { parameters.append(("resource", resource.absoluteString)) }
        logger.info("Exchanging the authorization code", metadata: ["endpoint": "\(hostOf(configuration.tokenEndpoint))"])
        let secrets = [response.code, request.codeVerifier]
        let answer = try await post(
            parameters, to: configuration.tokenEndpoint, endpoint: .token, secrets: secrets, dpop: request.dpopKey)
        var token = try TokenResponse.token(
            from: answer, secrets: secrets + clientSecrets, errorAliases: configuration.errorAliases, now: now)
        try Self.checkBinding(token, proved: request.dpopKey)
        token.dpopKey = request.dpopKey?.stored
        if let idToken = token.idToken {
            try IDTokenClaims.validate(idToken, configuration: configuration, nonce: request.nonce, now: now)
            try await IDTokenSignature.verify(idToken, configuration: configuration, network: network)
        }
        token.signedInAt = token.receivedAt
        token.issuedBy = configuration.tokenBinding
        logger.info("Signed in", metadata: ["token": "\(token)"])
        return token
    }

    /// A new access token for a refresh token. When the provider sends no new
    /// refresh token the old one stays valid (RFC 6749 §6), so it is kept.
    public func refresh(_ token: Token, now: Date = Date()) async throws -> Token {
        guard let refreshToken = token.refreshToken, !refreshToken.isEmpty else {
            throw OAuthError.invalidGrant(description: "there is no refresh token")
        }
        logger.info("Refreshing the access token", metadata: ["endpoint": "\(hostOf(configuration.tokenEndpoint))"])
        let secrets = [refreshToken, token.accessToken]
        var parameters = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        // RFC 8707 §2.2: named again, so the new access token keeps its audience.
        if let resource = configuration.resource { parameters.append(("resource", resource.absoluteString)) }
        let key = try dpopKey(of: token)
        let answer = try await post(parameters, to: configuration.tokenEndpoint, endpoint: .token, secrets: secrets, dpop: key)
        var fresh = try TokenResponse.token(
            from: answer, secrets: secrets + clientSecrets, errorAliases: configuration.errorAliases, now: now)
        try Self.checkBinding(fresh, proved: key)
        // The sign-in's key stays with it: the new tokens are bound to it as the old ones were.
        fresh.dpopKey = token.dpopKey
        if let idToken = fresh.idToken {
            // OIDC Core §12.2: same checks, but a refreshed ID token carries no new nonce.
            // By now the provider may have rotated the refresh token, so a bad ID token
            // costs only itself: it is dropped (the one from the sign-in stays), never the grant.
            do {
                try IDTokenClaims.validate(idToken, configuration: configuration, nonce: nil, now: now, previous: token.idToken)
                try await IDTokenSignature.verify(idToken, configuration: configuration, network: network)
            } catch {
                logger.notice("The refreshed ID token failed its checks; keeping the earlier one", metadata: ["error": "\(error)"])
                fresh.idToken = nil
            }
        }
        if fresh.refreshToken == nil {
            // The same refresh token: it ends when it did.
            fresh.refreshToken = refreshToken
            fresh.refreshExpiresAt = token.refreshExpiresAt
        }
        fresh.signedInAt = token.signedInAt
        if fresh.scope == nil { fresh.scope = token.scope }
        if fresh.idToken == nil { fresh.idToken = token.idToken }
        fresh.issuedBy = configuration.tokenBinding
        return fresh
    }

    /// Revokes the refresh token (which ends the grant) or, without one, the
    /// access token. Providers without a revocation endpoint are left alone.
    public func revoke(_ token: Token) async throws {
        guard let endpoint = configuration.revocationEndpoint else { return }
        let (value, hint) = token.refreshToken.map { ($0, "refresh_token") } ?? (token.accessToken, "access_token")
        logger.info("Revoking the \(hint)", metadata: ["endpoint": "\(hostOf(endpoint))"])
        let secrets = [token.accessToken, token.refreshToken]
        let answer = try await post(
            [("token", value), ("token_type_hint", hint)], to: endpoint, endpoint: .revocation, secrets: secrets)
        guard (200..<300).contains(answer.status) else {
            // An RFC 7009 error body, or the status alone.
            _ = try TokenResponse.fields(
                of: answer, endpoint: .revocation, secrets: secrets + clientSecrets,
                errorAliases: configuration.errorAliases)
            throw OAuthError.httpStatus(answer.status, endpoint: .revocation)
        }
    }

    /// The client secret in every form this client sends it: as it is (the body's
    /// form encoding is covered by redaction), and as the Basic credentials.
    var clientSecrets: [String?] {
        // A client assertion (private_key_jwt) is a credential for its minute: cleared from what is said too.
        let assertions: [String?] = configuration.clientAuthentication == .privateKeyJWT ? ClientKey.recentAssertions : []
        guard let secret = configuration.clientSecret, !secret.isEmpty else { return assertions }
        return [secret, basicCredentials] + assertions
    }

    /// RFC 6749 §2.3.1: each part form-encoded before joining and base64.
    var basicCredentials: String {
        let credentials = "\(FormCoding.escape(configuration.clientID)):\(FormCoding.escape(configuration.clientSecret ?? ""))"
        return Data(credentials.utf8).base64EncodedString()
    }

    /// POSTs a form with the configured client authentication (RFC 6749 §2.3) and, with `dpop`, a DPoP
    /// proof of that key (RFC 9449 §5), sent again once with the server's nonce where it asks (§8).
    func post(
        _ parameters: [(String, String)], to url: URL, endpoint: OAuthError.Endpoint, secrets: [String?], dpop: DPoPKey? = nil
    ) async throws -> HTTPResponse {
        guard let dpop else { return try await post(parameters, to: url, endpoint: endpoint, secrets: secrets, proof: nil) }
        let first = try await post(
            parameters, to: url, endpoint: endpoint, secrets: secrets,
            proof: try await ResourceAuthorization.signed {
                try await dpop.proof(method: "POST", url: url, nonce: DPoPNonces.nonce(for: url))
            })
        guard let nonce = first.header("DPoP-Nonce"), !nonce.isEmpty else { return first }
        DPoPNonces.keep(nonce, for: url)
        guard first.status == 400, (try? JSONValue(parsing: first.body))?["error"]?.string == "use_dpop_nonce" else { return first }
        logger.debug("The server asked for its DPoP nonce; proving again with it")
        let second = try await post(
            parameters, to: url, endpoint: endpoint, secrets: secrets,
            proof: try await ResourceAuthorization.signed { try await dpop.proof(method: "POST", url: url, nonce: nonce) })
        if let next = second.header("DPoP-Nonce"), !next.isEmpty { DPoPNonces.keep(next, for: url) }
        return second
    }

    /// The sign-in's DPoP key, for a token that has one; a key that cannot be read is said as such
    /// (without it, the provider refuses every renewal with a sentence nobody could act on).
    func dpopKey(of token: Token) throws -> DPoPKey? {
        guard let stored = token.dpopKey else { return nil }
        return try DPoPKey.reading(stored)
    }

    /// A token said to be bound (`DPoP`) when no key was proved cannot be used by anyone: refused.
    static func checkBinding(_ token: Token, proved key: DPoPKey?) throws {
        guard token.tokenType == "DPoP", key == nil else { return }
        throw OAuthError.malformedResponse(endpoint: .token, reason: "it gave a DPoP-bound token to a request that proved no key")
    }

    private func post(
        _ parameters: [(String, String)], to url: URL, endpoint: OAuthError.Endpoint, secrets: [String?], proof: String?
    ) async throws -> HTTPResponse {
        var parameters = parameters
        var headers = [
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            "User-Agent": OAuthCoreInfo.userAgent,
        ]
        if let proof { headers["DPoP"] = proof }
        switch configuration.clientAuthentication {
        case .clientSecretBasic:
            headers["Authorization"] = "Basic " + basicCredentials
        case .clientSecretPost:
            parameters += [("client_id", configuration.clientID), ("client_secret", configuration.clientSecret ?? "")]
        case .privateKeyJWT:
            // RFC 7523bis: the assertion is for the authorization server, named by its issuer (the token
            // endpoint where it has none written down).
            let audience = configuration.issuer?.absoluteString ?? configuration.tokenEndpoint.absoluteString
            parameters += [
                ("client_id", configuration.clientID), ("client_assertion_type", ClientKey.assertionType),
                ("client_assertion", try await ClientKey.of(configuration).assertion(clientID: configuration.clientID, audience: audience)),
            ]
        case .none:
            parameters.append(("client_id", configuration.clientID))
        }
        let request = HTTPRequest(
            method: "POST", url: url, headers: headers, body: Data(FormCoding.encode(parameters).utf8), timeout: timeout)
        do {
            return try await transport.send(request)
        } catch let error as TransportError {
            let mapped = Self.map(error, endpoint: endpoint, secrets: secrets + clientSecrets)
            logger.notice("\(endpoint.rawValue) failed", metadata: ["error": "\(mapped)"])
            throw mapped
        }
    }

    static func map(_ error: TransportError, endpoint: OAuthError.Endpoint, secrets: [String?]) -> OAuthError {
        switch error {
        case .timedOut: .timedOut(endpoint: endpoint)
        case .cannotConnect: .cannotConnect(endpoint: endpoint)
        case .connectionLost: .connectionLost(endpoint: endpoint)
        case .other(let reason): .network(endpoint: endpoint, reason: Redaction.clip(Redaction.redact(reason, removing: secrets)))
        }
    }

    private func hostOf(_ url: URL) -> String { url.host ?? "?" }
}
