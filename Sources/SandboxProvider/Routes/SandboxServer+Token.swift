import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

// The token endpoint: code exchange and refresh.
extension SandboxServer {
    // MARK: Token endpoint (RFC 6749 §4.1.3, §6, RFC 7636 §4.5)

    func token(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        await state.count(\.tokenRequests)
        if let response = try await applyFault(.token, context) { return response }
        let outcome = try await tokenOutcome(request)
        return render(outcome, acceptsJSON: request.headers[.accept]?.lowercased().contains("application/json") == true)
    }

    /// What the token endpoint answers, before it is written the way the imitated provider writes it.
    enum TokenOutcome {
        case tokens([(String, Any)])
        case error(String, String, basicChallenge: Bool = false)
        /// RFC 9449 §8: the proof must carry this nonce (400 `use_dpop_nonce`, `DPoP-Nonce`).
        case dpopNonce(String)
    }

    private func tokenOutcome(_ request: Request) async throws -> TokenOutcome {
        guard let parameters = try await Self.formBody(request) else {
            return .error("invalid_request", "The body must be application/x-www-form-urlencoded.")
        }
        if let name = parameters.repeated.first {
            return .error("invalid_request", "The parameter \(name) was sent more than once.")
        }
        let client: SandboxClient
        switch await authenticateClient(request, parameters) {
        case .success(let authenticated): client = authenticated
        case .failure(let error): return .error(error.error, error.description, basicChallenge: error.basicChallenge)
        }
        await state.note(parameters["resource"] ?? "", in: \.tokenRequestResources)
        var key: String?
        switch await dpopKey(request) {
        case .refused(let refusal): return refusal
        case .proved(let proved): key = proved
        }
        switch parameters["grant_type"] ?? likeness.impliedGrantType {
        case nil:
            return .error("invalid_request", "grant_type is missing.")
        case "authorization_code":
            await state.count(\.authorizationCodeGrants)
            return await exchangeCode(parameters, client: client, key: key)
        case "refresh_token":
            await state.count(\.refreshGrants)
            return await refresh(parameters, client: client, key: key)
        case "urn:ietf:params:oauth:grant-type:device_code":
            return await deviceToken(parameters, client: client, key: key)
        case "client_credentials":
            return await clientCredentials(parameters, client: client, key: key)
        case Self.tokenExchange where parameters["requested_token_type"] == Self.idJAGType:
            return await mintIDJAG(parameters, client: client)
        case Self.jwtBearer where configuration.trustedIdentityProvider != nil:
            return await redeemIDJAG(parameters, client: client, key: key)
        case Self.tokenExchange where configuration.narrowing == .exchange:
            return await exchangeToken(parameters, client: client, key: key)
        default:
            return .error(
                "unsupported_grant_type", "Only authorization_code, refresh_token, device_code and client_credentials are supported.")
        }
    }

    /// The key a token request's DPoP proof proves (RFC 9449 §4.3, §8), nil without one (or where
    /// DPoP is off, which ignores the header, §5); or why the proof is refused.
    private func dpopKey(_ request: Request) async -> Proved {
        switch await dpopProof(request, method: "POST") {
        case .success(let proof): return .proved(proof?.thumbprint)
        case .failure(.invalid(let sentence)), .failure(.unproved(let sentence)): return .refused(.error("invalid_dpop_proof", sentence))
        case .failure(.nonce(let nonce)): return .refused(.dpopNonce(nonce))
        }
    }

    private enum Proved {
        case proved(String?)
        case refused(TokenOutcome)
    }

    private func exchangeCode(_ parameters: Parameters, client: SandboxClient, key: String?) async -> TokenOutcome {
        guard let codeValue = parameters["code"] else {
            return .error("invalid_request", "code is missing.")
        }
        guard let redirectURI = parameters["redirect_uri"] else {
            return .error("invalid_request", "redirect_uri is missing; it was sent with the authorization request.")
        }
        // RFC 9449 §10: a code asked for with dpop_jkt is exchanged with a proof of that key alone,
        // checked before the code is spent (whoever intercepted it must not burn it for its client).
        if let bound = await state.dpopKey(ofCode: codeValue), key != bound {
            return .error("invalid_dpop_proof", "The authorization request named another DPoP key (dpop_jkt) than this proof's.")
        }
        let code: SandboxState.AuthorizationCode
        switch await state.redeemCode(codeValue) {
        case .unknown: return .error("invalid_grant", "The authorization code is not known.")
        case .expired: return .error("invalid_grant", "The authorization code has expired.")
        case .replayed:
            return .error(
                "invalid_grant", "The authorization code was already used; the tokens issued for it are revoked.")
        case .redeemed(let redeemed): code = redeemed
        }
        guard code.clientID == client.clientID else {
            return .error("invalid_grant", "The authorization code was issued to another client.")
        }
        guard code.redirectURI == redirectURI else {
            return .error("invalid_grant", "redirect_uri differs from the one in the authorization request.")
        }
        let verifier = parameters["code_verifier"]
        if verifier != nil, !client.isPublic, likeness.pkce == .refusedForConfidentialClients {
            // As reported of LinkedIn's standard apps: 401 invalid_client.
            return .error("invalid_client", "Client authentication failed")
        }
        switch (code.codeChallenge, verifier) {
        case (nil, nil): break
        case (nil, _?):
            return .error("invalid_grant", "code_verifier was sent, but the authorization request had no code_challenge.")
        case (_?, nil):
            return .error("invalid_request", "code_verifier is missing.")
        case (let challenge?, let verifier?):
            guard (43...128).contains(verifier.count), verifier.allSatisfy(Self.isVerifierCharacter),
                constantTimeEquals(Base64URL.encode(SHA256.hash(data: Data(verifier.utf8))), challenge)
            else {
                return .error("invalid_grant", "code_verifier does not match the code_challenge.")
            }
        }
        // RFC 8707 §2.2: the token request may name the resource again, but not another one.
        if let asked = parameters["resource"], asked != code.resource {
            return .error("invalid_target", "The authorization was not for the resource \(asked).")
        }
        var grant = SandboxState.Grant(
            clientID: client.clientID, username: code.username, scopes: code.scopes, resource: code.resource, issuer: issuer)
        grant.dpopKey = key
        let issued = await state.issueTokens(for: grant, ttl: configuration.accessTokenTTL, refreshTTL: configuration.refreshTokenTTL)
        await state.attach(grantID: issued.grantID, toCode: codeValue)
        return tokenResponse(issued, grant: grant, nonce: code.nonce, withRefreshToken: code.grantsRefreshToken)
    }

    private func refresh(_ parameters: Parameters, client: SandboxClient, key: String?) async -> TokenOutcome {
        guard let value = parameters["refresh_token"] else {
            return .error("invalid_request", "refresh_token is missing.")
        }
        // RFC 9449 §5: a bound refresh token is refreshed with a proof of its key, checked before it is
        // spent (a thief without the key must not burn it).
        if let bound = await state.grant(ofRefreshToken: value)?.dpopKey, key != bound {
            return .error(
                "invalid_dpop_proof",
                key == nil ? "The refresh token is bound to a DPoP key: send a proof." : "The proof's key is not the refresh token's.")
        }
        let grantID: String
        var grant: SandboxState.Grant
        switch await state.redeemRefreshToken(value) {
        case .unknown: return .error("invalid_grant", "The refresh token is not known.")
        case .revoked: return .error("invalid_grant", "The refresh token was revoked.")
        case .expired: return .error("invalid_grant", "The refresh token has expired.")
        case .replayed:
            return .error("invalid_grant", "The refresh token was already used; the grant is revoked.")
        case .redeemed(let id, let redeemed):
            grantID = id
            grant = redeemed
        }
        guard grant.clientID == client.clientID else {
            return .error("invalid_grant", "The refresh token was issued to another client.")
        }
        // RFC 6749 §6 and RFC 8707 §2.2: a refresh may ask for fewer scopes and for one resource;
        // the refresh token it answers still stands for the whole grant. Where narrowing is off,
        // both are ignored and the whole grant answered, as GitHub's and GitLab's refreshes do.
        var scopes: [String]?
        var audience: String?
        if configuration.narrowing != .none {
            switch narrowed(grant, scope: parameters["scope"], resource: parameters["resource"]) {
            case .allowed(let fewer, let resource): (scopes, audience) = (fewer, resource)
            case .refused(let refusal): return refusal
            }
        }
        let issued = await state.issueTokens(
            for: grant, reusing: grantID, ttl: configuration.accessTokenTTL, refreshTTL: configuration.refreshTokenTTL, scopes: scopes,
            audience: audience)
        return tokenResponse(issued, grant: grant, nonce: nil, withRefreshToken: true)
    }

    /// What a refresh or a token exchange may have of `grant`: `scope` no wider than it (nil: all of
    /// it), `resource` its own or, for a grant of the provider's own API, any (nil: its own).
    private func narrowed(_ grant: SandboxState.Grant, scope: String?, resource: String?) -> Narrowed {
        if let resource, resource != grant.resource {
            guard grant.resource == nil, let url = URL(string: resource), url.scheme != nil, url.fragment == nil else {
                return .refused(.error("invalid_target", "The authorization was not for the resource \(resource)."))
            }
        }
        guard let scope else { return .allowed(scopes: nil, audience: resource) }
        let requested = scope.split(separator: " ").map(String.init)
        guard requested.allSatisfy(grant.scopes.contains) else {
            return .refused(.error("invalid_scope", "A token cannot have scopes the user did not grant."))
        }
        return .allowed(scopes: requested, audience: resource)
    }

    private enum Narrowed {
        case allowed(scopes: [String]?, audience: String?)
        case refused(TokenOutcome)
    }

    // MARK: Token exchange (RFC 8693)

    static let tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    /// An access token of the client's own for fewer scopes or one resource: the answer carries no
    /// refresh token, and lives no longer than the token it was exchanged for.
    private func exchangeToken(_ parameters: Parameters, client: SandboxClient, key: String?) async -> TokenOutcome {
        guard let subject = parameters["subject_token"] else { return .error("invalid_request", "subject_token is missing.") }
        guard parameters["subject_token_type"] == Self.accessTokenType else {
            return .error("invalid_request", "subject_token_type must be \(Self.accessTokenType).")
        }
        if let wanted = parameters["requested_token_type"], wanted != Self.accessTokenType {
            return .error("invalid_request", "Only access tokens are issued here.")
        }
        guard case .valid(let grant, let held, let heldResource, _) = await state.checkAccessToken(subject) else {
            return .error("invalid_grant", "The subject token is not a valid access token.")
        }
        guard grant.clientID == client.clientID else {
            return .error("invalid_grant", "The subject token was issued to another client.")
        }
        if let bound = grant.dpopKey, key != bound {
            return .error("invalid_dpop_proof", "The subject token is bound to a DPoP key: send a proof of it.")
        }
        // The token exchanged is the limit: no wider than it, for its resource or (one of the API's) any.
        let limit = SandboxState.Grant(clientID: grant.clientID, username: grant.username, scopes: held, resource: heldResource)
        let resource = parameters["resource"] ?? parameters["audience"]
        switch narrowed(limit, scope: parameters["scope"], resource: resource) {
        case .refused(let refusal): return refusal
        case .allowed(let scopes, let audience):
            let scopes = scopes ?? held
            guard
                let (token, expiresAt) = await state.exchange(
                    subject, scopes: scopes, audience: audience ?? heldResource, ttl: configuration.accessTokenTTL)
            else { return .error("invalid_grant", "The subject token is not a valid access token.") }
            await state.count(\.tokenExchanges)
            return .tokens([
                ("access_token", token), ("issued_token_type", Self.accessTokenType),
                ("token_type", accessTokensBound(grant) ? "DPoP" : "Bearer"),
                ("expires_in", max(0, Int(expiresAt.timeIntervalSinceNow.rounded()))),
                ("scope", scopes.joined(separator: " ")),
            ])
        }
    }

    func tokenResponse(
        _ issued: SandboxState.IssuedTokens, grant: SandboxState.Grant, nonce: String?, withRefreshToken: Bool
    ) -> TokenOutcome {
        var fields: [(String, Any)] = [("access_token", issued.accessToken)]
        if accessTokensBound(grant) {
            fields.append(("token_type", "DPoP"))
        } else if likeness.sendsTokenType {
            fields.append(("token_type", likeness.answerFormat == .json ? "Bearer" : "bearer"))
        }
        if likeness.accessTokenLifetime != nil { fields.append(("expires_in", configuration.accessTokenTTL)) }
        if withRefreshToken {
            fields.append(("refresh_token", issued.refreshToken))
            if let lifetime = configuration.refreshTokenTTL, configuration.saysRefreshTokenTTL {
                fields.append(("refresh_token_expires_in", lifetime))
            }
        }
        fields.append(("scope", issued.scopes.joined(separator: likeness.scopeSeparator)))
        for (name, value) in likeness.extraTokenFields.sorted(by: { $0.key < $1.key }) {
            // created_at is a moment, the others are lifetimes.
            fields.append((name, name == "created_at" ? Int(Date().timeIntervalSince1970) : value))
        }
        if issued.scopes.contains("openid"), let user = configuration.user(grant.username) {
            let now = Int(Date().timeIntervalSince1970)
            var claims: [String: Any] = [
                "iss": tokenIssuer, "sub": Self.subject(for: user), "aud": grant.clientID,
                "iat": now, "exp": now + configuration.accessTokenTTL,
            ]
            if let nonce, likeness.idTokenCarriesNonce { claims["nonce"] = nonce }
            if let tenant = likeness.tenantID { claims["tid"] = tenant }
            if likeness.emailVerifiedAsString {
                // As LinkedIn's have been seen: profile claims, and email_verified as a string.
                claims["name"] = user.name
                claims["email"] = user.email
                claims["email_verified"] = user.emailVerified ? "true" : "false"
            }
            if let idToken = try? signer.sign(claims: claims) { fields.append(("id_token", idToken)) }
        }
        return .tokens(fields)
    }

    /// Writes an answer of the token endpoint as the imitated provider does: JSON, or
    /// (GitHub without `Accept: application/json`) a form; errors with 400/401, or with 200
    /// under the provider's own names.
    func render(_ outcome: TokenOutcome, acceptsJSON: Bool) -> Response {
        let asForm = likeness.answerFormat == .formUnlessJSONAccepted && !acceptsJSON
        switch outcome {
        case .tokens(let fields):
            if asForm { return Self.form(.ok, fields) }
            return Self.json(.ok, Dictionary(fields, uniquingKeysWith: { first, _ in first }), headers: Self.noStore)
        case .dpopNonce(let nonce):
            var headers = Self.noStore
            headers[HTTPField.Name("DPoP-Nonce")!] = nonce
            return Self.json(
                .badRequest, ["error": "use_dpop_nonce", "error_description": "Prove it again with the server's nonce."], headers: headers)
        case .error(let error, let description, let basicChallenge):
            guard likeness.errorsWithStatus200 else {
                return SandboxRefusal.oauth(error, description, basicChallenge: basicChallenge).response
            }
            let fields: [(String, Any)] = [("error", likeness.errorName(error)), ("error_description", description)]
            return asForm ? Self.form(.ok, fields) : Self.json(.ok, Dictionary(fields, uniquingKeysWith: { a, _ in a }))
        }
    }

    func addToken(to router: Router<SandboxRequestContext>) {
        router.post(RouterPath(likeness.tokenPath)) { request, context in try await self.token(request, context) }
    }
}
