import FoundationEssentials
import Logging

/// Fetches the signed-in person's profile and maps it through the
/// configuration. On a 401 it refreshes once and retries; a second 401 means
/// the sign-in is over.
public struct ProfileClient: Sendable {
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

    public func fetch(using session: AuthSession) async throws -> Profile {
        guard let endpoint = configuration.userinfoEndpoint else {
            throw OAuthError.invalidConfiguration("\(configuration.displayName) has no userinfo_endpoint.")
        }
        let mapping = configuration.profile
        logger.info("Fetching the profile", metadata: ["endpoint": "\(endpoint.host ?? "?")"])
        let object = try await authorizedJSON(endpoint, session: session)
        // OIDC Core §5.3.2: UserInfo about someone other than the ID token's subject is not used.
        // With an ID token, its subject is who signed in (the profile's own id may be another
        // identifier for the same person, as GitLab's numeric one is).
        let idTokenSubject = IDTokenClaims.subject(of: await session.currentToken()?.idToken)
        if let subject = object["sub"]?.string, let signedIn = idTokenSubject, subject != signedIn {
            logger.warning("The profile endpoint answered for another person; not shown")
            throw OAuthError.profileOfSomeoneElse
        }

        var profile = Profile(
            // Shown in the window as they are: no control or format character reaches it.
            name: ProfileMapping.first(mapping.name, in: object).map(Redaction.printable),
            email: ProfileMapping.first(mapping.email, in: object).map(Redaction.printable),
            emailVerified: ProfileMapping.flag(mapping.emailVerified, in: object),
            pictureURL: ProfileMapping.first(mapping.picture, in: object).flatMap(Self.safeURL))
        profile.profileURL = ProfileMapping.first(mapping.url, in: object).flatMap(Self.safeURL)

        if profile.profileURL == nil, let template = mapping.urlTemplate {
            var source: JSONValue? = object
            if let other = mapping.urlTemplateEndpoint, other != endpoint {
                // A second endpoint may be closed to this app (LinkedIn's /v2/me without
                // r_basicprofile): then there is no URL, and the note says why.
                do {
                    source = try await authorizedJSON(other, session: session)
                } catch let error as OAuthError {
                    if case .signedOut = error { throw error }
                    logger.notice("The profile URL source failed", metadata: ["error": "\(error)"])
                    source = nil
                }
            }
            profile.profileURL = source.flatMap { ProfileMapping.fill(template, from: $0) }.flatMap(Self.safeURL)
        }
        if profile.profileURL == nil { profile.note = mapping.missingURLNote }
        // Who this is, to tell one account from another: the ID token's subject, else the profile's id.
        profile.subject = idTokenSubject ?? ProfileMapping.first(mapping.id, in: object)
        profile.loginHint = ProfileMapping.first(mapping.loginHint, in: object).map(Redaction.printable)
        return profile
    }

    /// GET with the access token (and a DPoP proof, for a bound one); one refresh-and-retry on 401. For OAuth 1.0a, a
    /// request signed with the token credentials, which nothing can renew.
    func authorizedJSON(_ url: URL, session: AuthSession) async throws -> JSONValue {
        if configuration.authProtocol == .oauth1 { return try await signedJSON(url, session: session) }
        var token = try await session.freshToken()
        for attempt in 1...2 {
            let request = HTTPRequest(
                method: "GET", url: url, headers: ["Accept": "application/json", "User-Agent": OAuthCoreInfo.userAgent],
                timeout: timeout)
            let response = try await ResourceAuthorization.send(request, with: token) {
                try await send($0, secrets: [token.accessToken])
            }
            if response.status == 401, let refused = ResourceAuthorization.proofRefusal(in: response) {
                throw OAuthError.dpopProofRefused(endpoint: .profile, description: refused)
            }
            if response.status == 401 {
                guard attempt == 1 else { throw await session.endAfterRejection(of: token) }
                logger.info("The provider refused the access token; refreshing once")
                token = try await session.replacement(forRejected: token)
                continue
            }
            return try TokenResponse.fields(of: response, endpoint: .profile, secrets: [token.accessToken])
        }
        throw await session.endAfterRejection(of: token)
    }

    /// OAuth 1.0a: a GET signed with the token credentials. A refusal that names the
    /// token (or names nothing) ends the sign-in; one that names the clock, the nonce
    /// or the signature is said as it is, and the sign-in stays.
    private func signedJSON(_ url: URL, session: AuthSession) async throws -> JSONValue {
        let token = try await session.freshToken()
        let client = OAuth1Client(configuration: configuration, network: network)
        let secrets = [token.accessToken, token.tokenSecret, configuration.clientSecret]
        let response = try await send(try client.signedGET(url, with: token), secrets: secrets)
        if response.status == 401 || response.status == 403 {
            let problem = OAuth1Client.problem(in: response, secrets: secrets).map { $0(.profile) }
            if case .oauth1Problem(let code, _, _) = problem, !OAuthError.oauth1ProblemEndsSignIn(code) {
                logger.notice("The provider refused a signed request", metadata: ["problem": "\(code)"])
                throw problem!
            }
            // A bare 401 says nothing of why; but a signature carries the time, and a clock far from
            // the provider's is refused whatever the token: then the token is kept.
            if problem == nil, let date = response.header("date").flatMap(DiscoveryCache.httpDate),
                abs(date.timeIntervalSinceNow) > OAuth1Client.clockTolerance
            {
                throw OAuthError.clockOff(seconds: Int(date.timeIntervalSinceNow.rounded()))
            }
            if response.status == 401 || problem != nil { throw await session.endAfterRejection(of: token) }
        }
        return try TokenResponse.fields(of: response, endpoint: .profile, secrets: secrets)
    }

    private func send(_ request: HTTPRequest, secrets: [String?]) async throws -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch let error as TransportError {
            throw TokenClient.map(error, endpoint: .profile, secrets: secrets)
        }
    }

    /// Only web addresses go to a browser: https, or http on this computer.
    static func safeURL(_ text: String) -> URL? {
        guard let url = URL(string: text), url.host?.isEmpty == false,
            ProviderConfiguration.isSecureOrLoopback(url)
        else { return nil }
        return url
    }
}
