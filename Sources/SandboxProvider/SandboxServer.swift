import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// An offline OAuth 2.0 / OpenID Connect authorization server on loopback.
///
/// Strict by the RFCs, so that a client that works here has done the protocol
/// right: exact redirect URIs, single-use short-lived codes bound to client,
/// redirect URI, PKCE challenge, scope and nonce, rotating refresh tokens, and
/// RFC 6749 §5.2 errors.
public final class SandboxServer: Sendable {
    public let configuration: SandboxConfiguration
    /// Which provider's quirks it reproduces; `.standard` is RFC-strict.
    public let likeness: ProviderLikeness
    let state: SandboxState
    let signer = IDTokenSigner()
    let logger: Logger
    private let baseURL = Mutex<String>("http://127.0.0.1")

    public init(
        configuration: SandboxConfiguration = .defaults, likeness: ProviderLikeness = .standard, faults: [Fault] = [],
        stateFile: URL? = nil, logger: Logger
    ) throws {
        self.configuration = configuration
        self.likeness = likeness
        self.state = try SandboxState(faults: faults, stateFile: stateFile)
        self.logger = logger
    }

    /// The base URL the server listens on.
    var base: String { baseURL.withLock { $0 } }

    /// The issuer identifier: the base URL, under the path the imitated provider uses
    /// (with `{tenantid}` left in, as Microsoft's `/common` discovery document has it).
    var issuer: String { likeness.issuer(base: base) }

    /// The issuer an ID token names: for a tenant-specific provider, the user's tenant.
    var tokenIssuer: String { likeness.issuer(base: base, tenant: likeness.tenantID) }

    /// Binds to `127.0.0.1:port` (0 picks a free port), calls `onListening`
    /// with the base URL once connections are accepted, and serves until cancelled.
    public func run(port: Int, onListening: @escaping @Sendable (String) -> Void) async throws {
        let app = Application(
            router: makeRouter(),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "latchkey-sandbox"),
            onServerRunning: { [self] channel in
                let url = "http://127.0.0.1:\(channel.localAddress?.port ?? port)"
                self.baseURL.withLock { $0 = url }
                onListening(url)
            },
            logger: logger
        )
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    func makeRouter() -> Router<SandboxRequestContext> {
        let router = Router(context: SandboxRequestContext.self)
        router.middlewares.add(RequestLogMiddleware(logger: logger))
        // The imitated provider's own paths, so a preset pointed here differs only in its host.
        for path in likeness.discoveryPaths {
            router.get(RouterPath(path)) { _, _ in self.discovery() }
        }
        router.get("/jwks.json") { _, _ in Self.json(.ok, self.signer.jwks) }
        router.get(RouterPath(likeness.authorizePath)) { request, _ in await self.authorize(request) }
        router.post(RouterPath(likeness.authorizePath)) { request, _ in try await self.answerSignIn(request) }
        router.post(RouterPath(likeness.tokenPath)) { request, context in try await self.token(request, context) }
        if let revokePath = likeness.revokePath {
            router.post(RouterPath(revokePath)) { request, context in try await self.revoke(request, context) }
        }
        router.get(RouterPath(likeness.userinfoPath)) { request, context in try await self.userinfo(request, context) }
        router.post(RouterPath(likeness.userinfoPath)) { request, context in try await self.userinfo(request, context) }
        if let closed = likeness.closedEndpoint {
            router.get(RouterPath(closed.path)) { request, context in try await self.closedEndpoint(request, context) }
        }
        router.get("/avatar/:file") { _, context in self.avatar(context.parameters.get("file") ?? "") }
        router.post("/_admin/faults") { request, _ in try await self.addFault(request) }
        router.delete("/_admin/faults") { _, _ in
            await self.state.clearFaults()
            return Response(status: .noContent)
        }
        router.get("/_admin/stats") { _, _ in
            let statistics = await self.state.statistics
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(statistics))))
        }
        // Last: GitHub's and GitLab's profile pages sit right under the root.
        router.get(RouterPath(likeness.profilePagePath.replacingOccurrences(of: "{username}", with: ":username"))) {
            _, context in self.profilePage(context.parameters.get("username") ?? "")
        }
        return router
    }

    // MARK: Discovery (OpenID Connect Discovery 1.0, RFC 8414)

    func discovery() -> Response {
        let base = self.base
        var authMethods = ["client_secret_post"]
        if likeness.acceptsBasicAuthentication { authMethods.insert("client_secret_basic", at: 0) }
        if likeness.acceptsPublicClients { authMethods.append("none") }
        var claims = ["sub", "iss", "aud", "exp", "iat", "name", "given_name", "family_name"]
        if likeness.idTokenCarriesNonce { claims.insert("nonce", at: 5) }
        claims += likeness.profileShape == .openIDConnect ? ["preferred_username", "picture", "profile"] : ["picture"]
        claims += ["email", "email_verified"]
        if likeness.tenantID != nil { claims.append("tid") }
        var document: [String: Any] = [
            "issuer": issuer,
            "authorization_endpoint": "\(base)\(likeness.authorizePath)",
            "token_endpoint": "\(base)\(likeness.tokenPath)",
            "userinfo_endpoint": "\(base)\(likeness.userinfoPath)",
            "jwks_uri": "\(base)/jwks.json",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [signer.algorithm],
            "scopes_supported": likeness.scopes,
            "claims_supported": claims,
            "token_endpoint_auth_methods_supported": authMethods,
            "authorization_response_iss_parameter_supported": likeness.sendsIssuerInRedirect,
        ]
        if let revokePath = likeness.revokePath {
            document["revocation_endpoint"] = "\(base)\(revokePath)"
            document["revocation_endpoint_auth_methods_supported"] = authMethods
        }
        if likeness.pkce != .refusedForConfidentialClients || likeness.acceptsPublicClients {
            document["code_challenge_methods_supported"] = ["S256"]
        }
        return Self.json(.ok, document)
    }

    // MARK: Authorization endpoint (RFC 6749 §4.1.1, RFC 7636 §4.3)

    func authorize(_ request: Request) async -> Response {
        let parameters = Parameters(FormEncoding.decode(request.uri.query ?? "") ?? [])
        // Until client and redirect URI are known good, errors go to the page, never to a redirect.
        if parameters.repeated.contains("client_id") || parameters.repeated.contains("redirect_uri") {
            return Self.errorPage("Invalid request", "The request names its client or redirect URI more than once.")
        }
        guard let clientID = parameters["client_id"], let client = configuration.client(clientID) else {
            return Self.errorPage("Unknown application", "No application with this client_id is registered here.")
        }
        guard let redirectURI = parameters["redirect_uri"] else {
            return Self.errorPage("Invalid request", "The request has no redirect_uri.")
        }
        guard client.isRegistered(redirectURI: redirectURI) else {
            return Self.errorPage(
                "Unregistered redirect URI", "\(client.name) did not register the address it asked to return to.")
        }
        if likeness.loopbackRedirectOnly, !SandboxClient.isLoopbackHTTP(redirectURI) {
            return Self.errorPage(
                "Invalid request", "This provider sends desktop applications back only to a loopback address (http://127.0.0.1).")
        }
        if client.isPublic, !likeness.acceptsPublicClients {
            return Self.errorPage("Unauthorized client", "\(client.name) is not set up for sign-in without a client secret.")
        }
        let stateValue = parameters["state"]
        func fail(_ error: String, _ description: String) -> Response {
            redirect(to: redirectURI, error: error, description: description, state: stateValue)
        }
        if let name = parameters.repeated.first {
            return fail("invalid_request", "The parameter \(name) was sent more than once.")
        }
        guard let responseType = parameters["response_type"] else {
            return fail("invalid_request", "response_type is missing.")
        }
        guard responseType == "code" else {
            return fail("unsupported_response_type", "Only the authorization code flow (response_type=code) is supported.")
        }
        guard let stateValue else {
            return fail("invalid_request", "state is missing; the sandbox requires it.")
        }
        guard let scope = parameters["scope"] else {
            return fail("invalid_scope", "scope is missing.")
        }
        let scopes = scope.split(separator: " ").map(String.init)
        if let unknown = scopes.first(where: { !likeness.scopes.contains($0) }) {
            return fail("invalid_scope", "The scope \(unknown) is not known here.")
        }
        let challenge = parameters["code_challenge"]
        let method = parameters["code_challenge_method"]
        if let method, method != "S256" {
            return fail("invalid_request", "Only the S256 code challenge method is supported.")
        }
        if challenge == nil && method != nil {
            return fail("invalid_request", "code_challenge_method was sent without code_challenge.")
        }
        // A standard LinkedIn app's challenge is not refused here but never bound to the
        // code: the verifier then fails client authentication at the token endpoint.
        let ignoresChallenge = !client.isPublic && likeness.pkce == .refusedForConfidentialClients
        if let challenge, !ignoresChallenge {
            guard method == "S256" else {
                return fail("invalid_request", "code_challenge_method must be S256; plain is not accepted.")
            }
            guard challenge.count == 43, challenge.allSatisfy(Self.isBase64URLCharacter) else {
                return fail("invalid_request", "code_challenge is not a base64url SHA-256 digest.")
            }
        } else if client.isPublic, likeness.pkce != .optional {
            return fail("invalid_request", "This public client must use PKCE (code_challenge with S256).")
        }
        let pending = SandboxState.PendingAuthorization(
            client: client, redirectURI: redirectURI, state: stateValue, scopes: scopes,
            codeChallenge: ignoresChallenge ? nil : challenge, nonce: parameters["nonce"],
            grantsRefreshToken: likeness.grantsRefreshToken(scopes: scopes, parameters: parameters.values),
            expiresAt: Date().addingTimeInterval(TimeInterval(configuration.signInPageTTL)))
        let requestID = await state.addPending(pending)
        return Self.html(.ok, signInPage(pending, requestID: requestID))
    }

    /// The sign-in form's answer: Allow with the right password gives a code; Deny an error.
    func answerSignIn(_ request: Request) async throws -> Response {
        let body = try await Self.formBody(request)
        guard let body, let requestID = body["request_id"], let pending = await state.pending(requestID) else {
            return Self.errorPage(
                "Sign-in expired", "This sign-in page is no longer valid. Go back to the application and start again.",
                status: .badRequest)
        }
        switch body["action"] {
        case "deny":
            await state.removePending(requestID)
            // Nothing typed: the person left at the sign-in step, not at the consent.
            let signedIn = !(body["username"] ?? "").isEmpty
            return redirect(
                to: pending.redirectURI, error: signedIn ? likeness.denyError : likeness.denyBeforeSignInError ?? likeness.denyError,
                description: "The user denied the request.", state: pending.state)
        case "allow":
            let username = body["username"] ?? ""
            guard let user = configuration.user(username), constantTimeEquals(user.password, body["password"] ?? "")
            else {
                return Self.html(
                    .unauthorized,
                    signInPage(
                        pending, requestID: requestID, username: username,
                        error: "That username and password do not match. Try again."))
            }
            await state.removePending(requestID)
            let code = await state.issueCode(
                .init(
                    clientID: pending.client.clientID, redirectURI: pending.redirectURI,
                    codeChallenge: pending.codeChallenge, scopes: pending.scopes, nonce: pending.nonce,
                    grantsRefreshToken: pending.grantsRefreshToken, username: user.username,
                    expiresAt: Date().addingTimeInterval(TimeInterval(configuration.codeTTL))))
            return redirect(to: pending.redirectURI, parameters: [("code", code), ("state", pending.state)])
        default:
            return Self.errorPage("Invalid request", "The form was sent without Allow or Deny.", status: .badRequest)
        }
    }

    func signInPage(
        _ pending: SandboxState.PendingAuthorization, requestID: String, username: String = "", error: String? = nil
    ) -> String {
        Pages.signIn(
            clientName: pending.client.name, scopes: pending.scopes, requestID: requestID, action: likeness.authorizePath,
            descriptions: likeness.scopeDescriptions, imitating: likeness.displayName, username: username, error: error)
    }

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
    }

    private func tokenOutcome(_ request: Request) async throws -> TokenOutcome {
        guard let parameters = try await Self.formBody(request) else {
            return .error("invalid_request", "The body must be application/x-www-form-urlencoded.")
        }
        if let name = parameters.repeated.first {
            return .error("invalid_request", "The parameter \(name) was sent more than once.")
        }
        let client: SandboxClient
        switch authenticateClient(request, parameters) {
        case .success(let authenticated): client = authenticated
        case .failure(let error): return .error(error.error, error.description, basicChallenge: error.basicChallenge)
        }
        switch parameters["grant_type"] ?? likeness.impliedGrantType {
        case nil:
            return .error("invalid_request", "grant_type is missing.")
        case "authorization_code":
            await state.count(\.authorizationCodeGrants)
            return await exchangeCode(parameters, client: client)
        case "refresh_token":
            await state.count(\.refreshGrants)
            return await refresh(parameters, client: client)
        default:
            return .error("unsupported_grant_type", "Only authorization_code and refresh_token are supported.")
        }
    }

    private func exchangeCode(_ parameters: Parameters, client: SandboxClient) async -> TokenOutcome {
        guard let codeValue = parameters["code"] else {
            return .error("invalid_request", "code is missing.")
        }
        guard let redirectURI = parameters["redirect_uri"] else {
            return .error("invalid_request", "redirect_uri is missing; it was sent with the authorization request.")
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
        let grant = SandboxState.Grant(clientID: client.clientID, username: code.username, scopes: code.scopes)
        let issued = await state.issueTokens(for: grant, ttl: configuration.accessTokenTTL)
        await state.attach(grantID: issued.grantID, toCode: codeValue)
        return tokenResponse(issued, grant: grant, nonce: code.nonce, withRefreshToken: code.grantsRefreshToken)
    }

    private func refresh(_ parameters: Parameters, client: SandboxClient) async -> TokenOutcome {
        guard let value = parameters["refresh_token"] else {
            return .error("invalid_request", "refresh_token is missing.")
        }
        let grantID: String
        var grant: SandboxState.Grant
        switch await state.redeemRefreshToken(value) {
        case .unknown: return .error("invalid_grant", "The refresh token is not known.")
        case .revoked: return .error("invalid_grant", "The refresh token was revoked.")
        case .replayed:
            return .error("invalid_grant", "The refresh token was already used; the grant is revoked.")
        case .redeemed(let id, let redeemed):
            grantID = id
            grant = redeemed
        }
        guard grant.clientID == client.clientID else {
            return .error("invalid_grant", "The refresh token was issued to another client.")
        }
        if let scope = parameters["scope"] {
            let requested = scope.split(separator: " ").map(String.init)
            guard requested.allSatisfy(grant.scopes.contains) else {
                return .error("invalid_scope", "A refresh cannot add scopes the user did not grant.")
            }
            grant = .init(clientID: grant.clientID, username: grant.username, scopes: requested)
        }
        let issued = await state.issueTokens(for: grant, reusing: grantID, ttl: configuration.accessTokenTTL)
        return tokenResponse(issued, grant: grant, nonce: nil, withRefreshToken: true)
    }

    private func tokenResponse(
        _ issued: SandboxState.IssuedTokens, grant: SandboxState.Grant, nonce: String?, withRefreshToken: Bool
    ) -> TokenOutcome {
        var fields: [(String, Any)] = [("access_token", issued.accessToken)]
        if likeness.sendsTokenType { fields.append(("token_type", likeness.answerFormat == .json ? "Bearer" : "bearer")) }
        if likeness.accessTokenLifetime != nil { fields.append(("expires_in", configuration.accessTokenTTL)) }
        if withRefreshToken { fields.append(("refresh_token", issued.refreshToken)) }
        fields.append(("scope", grant.scopes.joined(separator: likeness.scopeSeparator)))
        for (name, value) in likeness.extraTokenFields.sorted(by: { $0.key < $1.key }) {
            // created_at is a moment, the others are lifetimes.
            fields.append((name, name == "created_at" ? Int(Date().timeIntervalSince1970) : value))
        }
        if grant.scopes.contains("openid"), let user = configuration.user(grant.username) {
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
        case .error(let error, let description, let basicChallenge):
            guard likeness.errorsWithStatus200 else { return Self.tokenError(error, description, basicChallenge: basicChallenge) }
            let fields: [(String, Any)] = [("error", likeness.errorName(error)), ("error_description", description)]
            return asForm ? Self.form(.ok, fields) : Self.json(.ok, Dictionary(fields, uniquingKeysWith: { a, _ in a }))
        }
    }

    // MARK: Client authentication (RFC 6749 §2.3)

    struct ClientAuthenticationError: Error {
        let error: String
        let description: String
        let basicChallenge: Bool

        var response: Response { SandboxServer.tokenError(error, description, basicChallenge: basicChallenge) }
    }

    func authenticateClient(_ request: Request, _ parameters: Parameters) -> Result<SandboxClient, ClientAuthenticationError> {
        func failure(_ error: String, _ description: String, basic: Bool = false) -> Result<SandboxClient, ClientAuthenticationError> {
            .failure(.init(error: error, description: description, basicChallenge: basic))
        }
        let header = request.headers[.authorization]
        let bodySecret = parameters["client_secret"]
        if let header, header.lowercased().hasPrefix("basic ") {
            guard likeness.acceptsBasicAuthentication else {
                // As LinkedIn answers: the secret is looked for in the body only.
                return failure("invalid_request", "A required parameter \"client_secret\" is missing.")
            }
            guard bodySecret == nil else {
                return failure("invalid_request", "Use one client authentication method, not two.")
            }
            guard let credentials = Self.basicCredentials(header) else {
                return failure("invalid_client", "The Authorization header is not valid Basic credentials.", basic: true)
            }
            if let bodyID = parameters["client_id"], bodyID != credentials.id {
                return failure("invalid_request", "client_id in the body differs from the authenticated client.")
            }
            guard let client = configuration.client(credentials.id), let secret = client.clientSecret,
                constantTimeEquals(secret, credentials.secret)
            else {
                return failure("invalid_client", "Client authentication failed.", basic: true)
            }
            return .success(client)
        }
        guard let clientID = parameters["client_id"], let client = configuration.client(clientID) else {
            return failure("invalid_client", "Client authentication failed: unknown or missing client_id.")
        }
        switch (client.clientSecret, bodySecret) {
        case (nil, nil):
            guard likeness.acceptsPublicClients else {
                return failure("invalid_request", "A required parameter \"client_secret\" is missing.")
            }
            return .success(client)
        case (nil, _?):
            return failure("invalid_client", "This public client has no secret to send.")
        case (_?, nil):
            return failure("invalid_client", "This confidential client must authenticate.")
        case (let secret?, let sent?):
            guard constantTimeEquals(secret, sent) else {
                return failure("invalid_client", "Client authentication failed.")
            }
            return .success(client)
        }
    }

    /// RFC 6749 §2.3.1: id and secret are form-encoded, then joined by a colon, then base64.
    static func basicCredentials(_ header: String) -> (id: String, secret: String)? {
        let encoded = header.dropFirst("basic ".count).trimmingCharacters(in: .whitespaces)
        guard let data = Data(base64Encoded: encoded), let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":"),
            let id = FormEncoding.decode("i=" + text[..<colon])?.first?.value,
            let secret = FormEncoding.decode("s=" + text[text.index(after: colon)...])?.first?.value
        else { return nil }
        return (id, secret)
    }

    // MARK: Revocation (RFC 7009)

    func revoke(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        await state.count(\.revocationRequests)
        if let response = try await applyFault(.revoke, context) { return response }
        guard let parameters = try await Self.formBody(request) else {
            return Self.tokenError("invalid_request", "The body must be application/x-www-form-urlencoded.")
        }
        let client: SandboxClient
        switch authenticateClient(request, parameters) {
        case .success(let authenticated): client = authenticated
        case .failure(let error): return error.response
        }
        guard let token = parameters["token"] else {
            return Self.tokenError("invalid_request", "token is missing.")
        }
        if let hint = parameters["token_type_hint"], !["access_token", "refresh_token"].contains(hint) {
            return Self.tokenError("unsupported_token_type", "token_type_hint must be access_token or refresh_token.")
        }
        if let (_, owner) = await state.find(token: token) {
            guard owner == client.clientID else {
                return Self.tokenError("unauthorized_client", "The token was issued to another client.")
            }
            await state.revoke(token: token)
        }
        // An unknown token is "revoked" already: 200 either way (RFC 7009 §2.2).
        return Response(status: .ok, headers: Self.noStore)
    }

    // MARK: UserInfo (OpenID Connect Core §5.3, RFC 6750)

    func userinfo(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        await state.count(\.userinfoRequests)
        if let response = try await applyFault(.userinfo, context) { return response }
        if let refusal = refuseWithoutUserAgent(request) { return refusal }
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: #"Bearer realm="latchkey-sandbox""#])
        }
        let token = header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        func invalid(_ description: String) -> Response {
            Response(
                status: .unauthorized,
                headers: [
                    .wwwAuthenticate: #"Bearer realm="latchkey-sandbox", error="invalid_token", error_description="\#(description)""#
                ])
        }
        switch await state.checkAccessToken(token) {
        case .unknown: return invalid("The access token is not known.")
        case .expired: return invalid("The access token expired.")
        case .revoked: return invalid("The access token was revoked.")
        case .valid(let grant, let scopes):
            guard let user = configuration.user(grant.username) else { return invalid("The access token is not known.") }
            switch likeness.profileShape {
            case .gitHub: return Self.json(.ok, gitHubUser(user), headers: Self.noStore)
            case .gitLab: return Self.json(.ok, gitLabUser(user), headers: Self.noStore)
            case .openIDConnect, .linkedIn: break
            }
            guard scopes.contains("openid") else {
                return Response(
                    status: .forbidden,
                    headers: [.wwwAuthenticate: #"Bearer realm="latchkey-sandbox", error="insufficient_scope", scope="openid""#])
            }
            var claims: [String: Any] = ["sub": Self.subject(for: user)]
            if scopes.contains("profile") {
                claims["name"] = user.name
                claims["given_name"] = user.givenName
                claims["family_name"] = user.familyName
                claims["preferred_username"] = user.username
                claims["picture"] = "\(base)/avatar/\(user.username).svg"
                if likeness.profileShape == .linkedIn {
                    // LinkedIn's UserInfo has no profile link, and its locale is an object.
                    claims["preferred_username"] = nil
                    claims["locale"] = ["country": "GB", "language": "en"]
                } else {
                    claims["profile"] = profileURL(user)
                }
            }
            if scopes.contains("email") {
                claims["email"] = user.email
                claims["email_verified"] = user.emailVerified
            }
            return Self.json(.ok, claims.compactMapValues { $0 }, headers: Self.noStore)
        }
    }

    /// GitHub's `/user`: `name` and `email` are null when the person keeps them private.
    func gitHubUser(_ user: SandboxUser) -> [String: Any] {
        [
            "login": user.username, "id": Self.numericID(for: user), "type": "User",
            "name": user.publicProfile ? user.name : NSNull(), "email": user.publicProfile ? user.email : NSNull(),
            "avatar_url": "\(base)/avatar/\(user.username).svg", "html_url": profileURL(user),
        ]
    }

    /// GitLab's `/api/v4/user`: `public_email` is empty unless the person made one public.
    func gitLabUser(_ user: SandboxUser) -> [String: Any] {
        [
            "id": Self.numericID(for: user), "username": user.username, "name": user.name, "state": "active",
            "email": user.email, "public_email": user.publicProfile ? user.email : "",
            "avatar_url": "\(base)/avatar/\(user.username).svg", "web_url": profileURL(user),
        ]
    }

    func profileURL(_ user: SandboxUser) -> String {
        base + likeness.profilePagePath.replacingOccurrences(of: "{username}", with: user.username)
    }

    /// A second profile endpoint this app may not use (LinkedIn's `/v2/me` without `r_basicprofile`).
    func closedEndpoint(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        await state.count(\.userinfoRequests)
        guard let closed = likeness.closedEndpoint else { return Response(status: .notFound) }
        guard request.headers[.authorization]?.lowercased().hasPrefix("bearer ") == true else {
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: #"Bearer realm="latchkey-sandbox""#])
        }
        return Response(
            status: .init(code: closed.status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: closed.body)))
    }

    /// GitHub's REST API refuses a request that names no client.
    func refuseWithoutUserAgent(_ request: Request) -> Response? {
        guard likeness.requiresUserAgent, (request.headers[.userAgent] ?? "").isEmpty else { return nil }
        return Response(
            status: .forbidden, headers: [.contentType: "text/plain"],
            body: .init(
                byteBuffer: ByteBuffer(
                    string: "Request forbidden by administrative rules. Please make sure your request has a User-Agent header.\n")))
    }

    static func numericID(for user: SandboxUser) -> Int {
        Int(SHA256.hash(data: Data(user.username.utf8)).prefix(3).reduce(0) { $0 << 8 | Int($1) })
    }

    // MARK: Public pages

    func profilePage(_ username: String) -> Response {
        guard let user = configuration.user(username) else {
            return Self.html(.notFound, Pages.error(title: "No such profile", message: "Nobody here is called \(username)."))
        }
        return Self.html(.ok, Pages.profile(user, pictureURL: "/avatar/\(user.username).svg"))
    }

    func avatar(_ file: String) -> Response {
        guard file.hasSuffix(".svg"), let user = configuration.user(String(file.dropLast(4))) else {
            return Response(status: .notFound)
        }
        return Response(
            status: .ok, headers: [.contentType: "image/svg+xml"],
            body: .init(byteBuffer: ByteBuffer(string: Pages.avatar(for: user))))
    }

    /// An opaque, stable subject identifier, as real providers give: not the username.
    static func subject(for user: SandboxUser) -> String {
        String(Base64URL.encode(SHA256.hash(data: Data("latchkey-sandbox:\(user.username)".utf8))).prefix(22))
    }

    // MARK: Faults on demand

    func addFault(_ request: Request) async throws -> Response {
        let buffer = try await request.body.collect(upTo: 16 * 1024)
        guard let fault = try? JSONDecoder().decode(Fault.self, from: Data(buffer: buffer)), fault.count > 0 else {
            return Self.json(
                .badRequest,
                ["error": "Expected {\"endpoint\": token|userinfo|revoke, \"kind\": 500|html|empty|truncated|delay|close, \"count\": N}"])
        }
        await state.setFault(fault)
        return Response(status: .noContent)
    }

    /// The answer a pending fault gives instead of the real one, or nil to answer normally.
    func applyFault(_ endpoint: FaultEndpoint, _ context: SandboxRequestContext) async throws -> Response? {
        guard let fault = await state.takeFault(for: endpoint) else { return nil }
        logger.info("injecting fault \(fault.kind.rawValue) into /\(endpoint.rawValue)")
        switch fault.kind {
        case .serverError:
            return Response(
                status: .internalServerError, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "Internal Server Error\n")))
        case .html:
            return Self.html(
                .ok,
                Pages.document(
                    title: "Service unavailable",
                    body: "<h1>We'll be right back</h1><p>The service is down for maintenance.</p>"))
        case .empty:
            return Response(status: .ok, headers: [.contentType: "application/json", .contentLength: "0"])
        case .truncated:
            let whole = ByteBuffer(string: #"{"access_token":"sbx_at_truncated","token_type":"Bearer","expires_in":3600}"#)
            let half = whole.getSlice(at: 0, length: whole.readableBytes / 2)!
            let channel = context.channel
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(contentLength: whole.readableBytes) { writer in
                    try await writer.write(half)
                    try await channel.close()
                })
        case .delay:
            try await Task.sleep(for: .seconds(fault.delaySeconds))
            return nil
        case .close:
            try? await context.channel.close()
            return Response(status: .internalServerError)
        }
    }

    // MARK: Helpers

    static let noStore: HTTPFields = [.cacheControl: "no-store", HTTPField.Name("Pragma")!: "no-cache"]

    static func json(_ status: HTTPResponse.Status, _ object: Any, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func form(_ status: HTTPResponse.Status, _ fields: [(String, Any)]) -> Response {
        var headers = noStore
        headers[.contentType] = "application/x-www-form-urlencoded; charset=utf-8"
        let body = FormEncoding.encode(fields.map { ($0.0, "\($0.1)") })
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func html(_ status: HTTPResponse.Status, _ page: String) -> Response {
        var headers = noStore
        headers[.contentType] = "text/html; charset=utf-8"
        // No form-action: browsers apply it to the redirect after the form too,
        // which would block the way back to the app.
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    static func errorPage(_ title: String, _ message: String, status: HTTPResponse.Status = .badRequest) -> Response {
        html(status, Pages.error(title: title, message: message))
    }

    /// RFC 6749 §5.2: 400, or 401 for a client that failed to authenticate.
    static func tokenError(_ error: String, _ description: String, basicChallenge: Bool = false) -> Response {
        var headers = noStore
        if basicChallenge { headers[.wwwAuthenticate] = #"Basic realm="latchkey-sandbox""# }
        let status: HTTPResponse.Status = error == "invalid_client" ? .unauthorized : .badRequest
        return json(status, ["error": error, "error_description": description], headers: headers)
    }

    func redirect(to redirectURI: String, parameters: [(String, String)]) -> Response {
        let separator = redirectURI.contains("?") ? "&" : "?"
        // RFC 9207: the issuer rides along so a client can tell which server answered.
        let query = FormEncoding.encode(parameters + (likeness.sendsIssuerInRedirect ? [("iss", issuer)] : []))
        return Response(status: .found, headers: [.location: redirectURI + separator + query, .cacheControl: "no-store"])
    }

    func redirect(to redirectURI: String, error: String, description: String, state: String?) -> Response {
        var parameters = [("error", error), ("error_description", description)]
        if let state { parameters.append(("state", state)) }
        return redirect(to: redirectURI, parameters: parameters)
    }

    static func formBody(_ request: Request) async throws -> Parameters? {
        guard let type = request.headers[.contentType]?.lowercased(),
            type.hasPrefix("application/x-www-form-urlencoded")
        else { return nil }
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        return FormEncoding.decode(String(buffer: buffer)).map(Parameters.init)
    }

    static func isBase64URLCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_")
    }

    /// RFC 7636 §4.1: unreserved characters only.
    static func isVerifierCharacter(_ c: Character) -> Bool {
        isBase64URLCharacter(c) || c == "." || c == "~"
    }
}
