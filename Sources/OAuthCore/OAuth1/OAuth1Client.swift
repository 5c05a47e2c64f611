import CryptoExtras
import FoundationEssentials
import Logging

/// An OAuth 1.0a client (RFC 5849): temporary credentials (§2.1), the
/// resource-owner authorization URL (§2.2), token credentials (§2.3), and
/// signed requests (§3). The client id is the consumer key; the client secret,
/// or for RSA-SHA1 the private key file, is what signs.
public struct OAuth1Client: Sendable {
    public let configuration: ProviderConfiguration
    /// The transport, how long a whole request may take, and the logger.
    public let network: Network
    public var transport: any HTTPTransport { network.transport }
    public var timeout: Double { network.timeout }
    var logger: Logger { network.logger }
    let now: @Sendable () -> Date

    /// Seconds a provider is taken to allow between its clock and a request's timestamp
    /// (five minutes is the common window); further off, a refusal is put down to the clock.
    public static let clockTolerance: TimeInterval = 300

    public init(
        configuration: ProviderConfiguration, network: Network = Network(), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.network = network
        self.now = now
    }

    // MARK: The three steps

    /// §2.1: asks for temporary credentials, naming where the person comes back
    /// (`oauth_callback`, in the signed request — never in the authorization URL).
    /// The provider must confirm the callback (`oauth_callback_confirmed=true`, OAuth
    /// 1.0a): one that does not speaks the older OAuth 1.0, open to session fixation.
    public func temporaryCredentials(callback: URL) async throws -> OAuth1Authorization {
        guard let endpoint = configuration.requestTokenEndpoint else {
            throw OAuthError.invalidConfiguration("\(configuration.displayName) has no request_token_endpoint.")
        }
        logger.info("Asking for a request token", metadata: ["endpoint": "\(endpoint.host ?? "?")"])
        let request = try signed(
            method: "POST", url: endpoint, form: [], token: nil, extra: [("oauth_callback", callback.absoluteString)])
        let fields = try await send(request, endpoint: .requestToken, secrets: [])
        guard let token = fields["oauth_token"], !token.isEmpty, let secret = fields["oauth_token_secret"] else {
            throw OAuthError.malformedResponse(endpoint: .requestToken, reason: "no oauth_token and oauth_token_secret")
        }
        guard fields["oauth_callback_confirmed"] == "true" else {
            throw OAuthError.oauth1CallbackNotConfirmed
        }
        return OAuth1Authorization(configuration: configuration, callback: callback, token: token, secret: secret)
    }

    /// §2.3: trades the request token and the verifier the person brought back for
    /// token credentials. The request token's secret signs; the verifier is used this once.
    public func tokenCredentials(for authorization: OAuth1Authorization, verifier: OAuth1Verifier) async throws -> Token {
        logger.info("Exchanging the verifier", metadata: ["endpoint": "\(configuration.tokenEndpoint.host ?? "?")"])
        let secrets = [authorization.temporaryToken, authorization.temporarySecret, verifier.value]
        let request = try signed(
            method: "POST", url: configuration.tokenEndpoint, form: [], token: authorization.temporaryToken,
            tokenSecret: authorization.temporarySecret, extra: [("oauth_verifier", verifier.value)])
        let fields = try await send(request, endpoint: .token, secrets: secrets)
        guard let token = fields["oauth_token"], !token.isEmpty, let secret = fields["oauth_token_secret"] else {
            throw OAuthError.malformedResponse(endpoint: .token, reason: "no oauth_token and oauth_token_secret")
        }
        var credentials = Token(accessToken: token, tokenType: "OAuth1", receivedAt: now(), tokenSecret: secret)
        credentials.issuedBy = configuration.tokenBinding
        logger.info("Signed in", metadata: ["token": "\(credentials)"])
        return credentials
    }

    // MARK: Signing

    /// A request signed per §3.4 with the protocol parameters in the `Authorization`
    /// header (§3.5.1). `form`, when given, is sent as the body and signed with it.
    public func signed(
        method: String, url: URL, form: [(String, String)]? = nil, token: String?, tokenSecret: String? = nil,
        extra: [(String, String)] = []
    ) throws -> HTTPRequest {
        let body = form.map(FormCoding.encode)
        var protocolParameters = [
            ("oauth_consumer_key", configuration.clientID),
            ("oauth_signature_method", configuration.signatureMethod.rawValue),
            ("oauth_timestamp", String(Int(now().timeIntervalSince1970))),
            ("oauth_nonce", OAuth1Signature.nonce()),
            ("oauth_version", "1.0"),
        ]
        if let token { protocolParameters.append(("oauth_token", token)) }
        protocolParameters += extra
        let signature: String
        switch configuration.signatureMethod {
        case .plaintext:
            // §3.4.4: the secrets themselves, so never over a connection anyone can read.
            guard url.scheme?.lowercased() == "https" else {
                throw OAuthError.invalidConfiguration("PLAINTEXT signatures are sent only over https, not to \(url.absoluteString).")
            }
            signature = OAuth1Signature.key(consumerSecret: configuration.clientSecret ?? "", tokenSecret: tokenSecret)
        case .hmacSHA1, .rsaSHA1:
            guard let parameters = OAuth1Signature.requestParameters(url: url, formBody: body, protocolParameters: protocolParameters)
            else { throw OAuthError.invalidConfiguration("the address \(url.absoluteString) holds a broken percent escape.") }
            let base = OAuth1Signature.baseString(method: method, url: url, parameters: parameters)
            if configuration.signatureMethod == .hmacSHA1 {
                signature = OAuth1Signature.hmacSHA1(base, consumerSecret: configuration.clientSecret ?? "", tokenSecret: tokenSecret)
            } else {
                signature = try OAuth1Signature.rsaSHA1(base, key: try privateKey())
            }
        }
        protocolParameters.append(("oauth_signature", signature))
        var headers = [
            "Authorization": OAuth1Signature.authorizationHeader(protocolParameters),
            "Accept": "application/json, application/x-www-form-urlencoded;q=0.9, */*;q=0.1",
            "User-Agent": OAuthCoreInfo.userAgent,
        ]
        if body != nil { headers["Content-Type"] = "application/x-www-form-urlencoded" }
        return HTTPRequest(method: method, url: url, headers: headers, body: body.map { Data($0.utf8) }, timeout: timeout)
    }

    /// A GET signed with the stored token credentials: what the profile endpoint is asked with.
    public func signedGET(_ url: URL, with token: Token) throws -> HTTPRequest {
        try signed(method: "GET", url: url, token: token.accessToken, tokenSecret: token.tokenSecret)
    }

    /// The consumer's RSA key, read from `private_key_file` when it is needed.
    func privateKey() throws -> _RSA.Signing.PrivateKey {
        guard let path = configuration.privateKeyFile else {
            throw OAuthError.invalidConfiguration("RSA-SHA1 needs private_key_file, the consumer's private key.")
        }
        let file = URL(fileURLWithPath: PathText.expandingTilde(path))
        let pem: String
        do {
            pem = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw OAuthError.invalidConfiguration("the private key file \(file.path) cannot be read.")
        }
        do {
            return try OAuth1Signature.privateKey(pem: pem)
        } catch {
            throw OAuthError.invalidConfiguration("\(file.path) does not hold an RSA private key in PEM form.")
        }
    }

    // MARK: Answers

    /// Sends a request to one of the protocol's endpoints and reads its form-encoded answer.
    func send(_ request: HTTPRequest, endpoint: OAuthError.Endpoint, secrets: [String?]) async throws -> [String: String] {
        let secrets = secrets + [configuration.clientSecret]
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as TransportError {
            let mapped = TokenClient.map(error, endpoint: endpoint, secrets: secrets)
            logger.notice("\(endpoint.rawValue) failed", metadata: ["error": "\(mapped)"])
            throw mapped
        }
        return try Self.fields(of: response, endpoint: endpoint, secrets: secrets)
    }

    /// RFC 5849 §2.1 and §2.3 answers are forms, whatever the content type says
    /// (providers send text/plain and text/html). Errors are read from the Problem
    /// Reporting extension's `oauth_problem`, in the body or in `WWW-Authenticate`.
    public static func fields(of response: HTTPResponse, endpoint: OAuthError.Endpoint, secrets: [String?]) throws -> [String: String] {
        let text = String(decoding: response.body, as: UTF8.self).trimmed()
        guard (200..<300).contains(response.status) else {
            if let problem = problem(in: response, secrets: secrets) { throw problem(endpoint) }
            // A bare 401: at the request token endpoint only the consumer's key and secret are at
            // stake; at the token endpoint it is the request token and verifier (X answers so).
            if response.status == 401, endpoint == .requestToken { throw OAuthError.invalidClient(description: nil) }
            if response.status == 401, endpoint == .token { throw OAuthError.invalidGrant(description: nil) }
            throw OAuthError.httpStatus(response.status, endpoint: endpoint)
        }
        if text.isEmpty { throw OAuthError.emptyResponse(endpoint: endpoint) }
        if text.hasPrefix("<") { throw OAuthError.htmlInsteadOfJSON(endpoint: endpoint) }
        guard !text.hasPrefix("{"), let pairs = FormCoding.decode(text), !pairs.isEmpty else {
            throw OAuthError.malformedResponse(endpoint: endpoint, reason: "not a form-encoded answer")
        }
        var fields: [String: String] = [:]
        for (name, value) in pairs {
            // Two tokens or two secrets in one answer cannot be trusted.
            guard fields[name] == nil else {
                throw OAuthError.malformedResponse(endpoint: endpoint, reason: "\(Redaction.safeCode(name, removing: secrets)) twice")
            }
            fields[name] = value
        }
        return fields
    }

    /// The `oauth_problem` a refusal names, as an error for the endpoint it came from.
    static func problem(in response: HTTPResponse, secrets: [String?]) -> ((OAuthError.Endpoint) -> OAuthError)? {
        var fields: [String: String] = [:]
        let text = String(decoding: response.body, as: UTF8.self).trimmed()
        if !text.hasPrefix("<"), !text.hasPrefix("{"), let pairs = FormCoding.decode(text) {
            for (name, value) in pairs where fields[name] == nil { fields[name] = value }
        }
        if fields["oauth_problem"] == nil, let challenge = response.header("www-authenticate"),
            let parameters = (try? AuthenticateChallenge.parse(challenge))?.first(where: { $0.is("OAuth") })?.parameters
        {
            for (name, value) in parameters where fields[name] == nil {
                fields[name] = FormCoding.decode("v=\(value)")?.first?.value ?? value
            }
        }
        guard let code = fields["oauth_problem"] else { return nil }
        let problem = Redaction.safeCode(code, removing: secrets)
        let advice = fields["oauth_problem_advice"].map { Redaction.clip(Redaction.redact($0, removing: secrets)) }
        return { endpoint in .oauth1Problem(problem, advice: advice, endpoint: endpoint) }
    }
}
