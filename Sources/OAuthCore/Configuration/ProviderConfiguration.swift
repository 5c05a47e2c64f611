import FoundationEssentials
import Loopback

/// Everything OAuthCore needs to know about one provider, loaded from JSON.
///
/// A provider that needs nothing special is just a file of this shape; a
/// `ProviderCatalog` finds them and layers the person's client id and secret
/// over them, which never ship with a preset.
public struct ProviderConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// How the app proves who it is at the token endpoint (RFC 6749 §2.3, OIDC Core §9).
    public enum ClientAuthentication: String, Codable, Sendable {
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        /// A JWT signed with the client's private key (`private_key_file`), RFC 7523 §2.2: no secret travels.
        case privateKeyJWT = "private_key_jwt"
        case none
    }

    /// How the app gets its tokens: a person signs in (the authorization code grant, RFC 6749 §4.1),
    /// or the client asks for them in its own name with nobody involved (client credentials, §4.4).
    public enum Grant: String, Codable, Sendable {
        case authorizationCode = "authorization_code"
        case clientCredentials = "client_credentials"
        /// Enterprise-Managed Authorization: an ID-JAG from the organisation's identity provider
        /// (`identityProvider`) traded for the token (the JWT bearer grant, RFC 7523).
        case idJAG = "id_jag"

        /// Whether tokens are had with nobody involved, each time one is needed (no refresh token).
        public var mints: Bool { self != .authorizationCode }
    }

    /// How a token narrower than the sign-in (fewer scopes, one resource) is had from the provider.
    public enum NarrowingMethod: String, Codable, Sendable, CaseIterable {
        /// A refresh naming the scopes and resource (RFC 6749 §6, RFC 8707 §2.2): the standard way.
        case refresh
        /// RFC 8693 token exchange of the sign-in's access token, where the provider offers it.
        case tokenExchange = "token_exchange"
        /// The provider gives its tokens whole (GitHub, GitLab): a program gets the whole token.
        case none
    }

    /// What shows the provider's page (RFC 8252 §4): a web view in the app's own
    /// window, or the person's default browser, which returns through a loopback listener.
    public enum UserAgentKind: String, Codable, Sendable, CaseIterable {
        case embedded
        case browser
    }

    /// Which protocol the provider speaks: OAuth 2.0 (and OpenID Connect), or
    /// OAuth 1.0a (RFC 5849), where the client id is the consumer key and the
    /// client secret the consumer secret.
    public enum AuthProtocol: String, Codable, Sendable {
        case oauth2
        case oauth1
    }

    public var id: String
    public var displayName: String
    /// The provider's issuer identifier. Endpoints given as paths (`/oauth/token`)
    /// are appended to it, so one preset serves gitlab.com and a self-hosted GitLab.
    public var issuer: URL?
    /// The server names itself in every authorization response (`iss`, RFC 9207): one without is refused.
    /// From its metadata's `authorization_response_iss_parameter_supported`.
    public var requiresIssuerInResponse: Bool
    public var authorizationEndpoint: URL
    public var tokenEndpoint: URL
    public var revocationEndpoint: URL?
    public var userinfoEndpoint: URL?
    public var clientID: String
    public var clientSecret: String?
    public var clientAuthentication: ClientAuthentication
    public var redirectURI: URL
    /// Where the browser comes back to, when it is not `redirectURI` on a port of the moment: a
    /// loopback URI with a fixed port (`http://127.0.0.1:49152/callback`), for a server that
    /// compares redirect URIs exactly (RFC 8252 §7.3 asks it not to, many do). Latchkey registers
    /// one with every client it registers, and listens on that port.
    public var browserRedirectURI: URL?
    public var scopes: [String]
    /// PKCE S256 (RFC 7636). On wherever the provider supports it.
    public var usePKCE: Bool
    /// Whether to send an OpenID Connect nonce and require it back in the ID
    /// token. Off only for a provider whose ID tokens never carry one (LinkedIn):
    /// OIDC Core §3.1.3.7(11) asks for the check only when a nonce was sent.
    public var useNonce: Bool
    /// The `iss` its ID tokens carry, when that differs from `issuer`: Microsoft's
    /// `/common` authority names the user's tenant, so the value is a template in
    /// which `{tenantid}` stands for the token's own `tid` claim.
    public var idTokenIssuer: String?
    /// The provider's own names for RFC 6749's errors: GitHub's `bad_verification_code`
    /// is `invalid_grant` (what decides whether a refused refresh signs the person out),
    /// LinkedIn's `user_cancelled_authorize` is `access_denied` (a cancel, not a failure).
    public var errorAliases: [String: String]
    /// Extra parameters for the authorization request (`prompt`, `access_type`, …).
    public var authorizationParameters: [String: String]
    public var profile: ProfileMapping
    /// Where a developer registers an app with this provider, shown when credentials are missing.
    public var registrationHint: String?
    /// The user agents the provider allows, its preferred one first. Google refuses
    /// embedded views; a provider whose redirect URI is an https address allows only them.
    public var userAgents: [UserAgentKind]
    /// The person's choice among `userAgents` (their own file's `user_agent`); nil: the provider's first.
    public var preferredUserAgent: UserAgentKind?
    /// The protected resource the tokens are for (RFC 8707 `resource`), sent in the
    /// authorization request and at every token request; nil: the provider's own API.
    public var resource: URL?
    /// The provider's JWK Set (`jwks_uri`): when given, every ID token's signature is
    /// checked against it, not only its claims.
    public var jwksURI: URL?
    /// The JWS algorithms its ID tokens may carry (`id_token_signing_alg_values`):
    /// asymmetric ones only, never `none` nor an HMAC. Pinned per provider.
    public var idTokenSigningAlgorithms: [String]
    /// OAuth 2.0 unless the file says `"protocol": "oauth1"`.
    public var authProtocol: AuthProtocol
    /// OAuth 1.0a: where temporary credentials (the request token) come from (RFC 5849 §2.1).
    /// `authorization_endpoint` is then the resource-owner authorization page (§2.2)
    /// and `token_endpoint` the token-credentials endpoint (§2.3).
    public var requestTokenEndpoint: URL?
    /// OAuth 1.0a: how requests are signed; HMAC-SHA1 unless the file says otherwise.
    public var signatureMethod: OAuth1Signature.Method
    /// OAuth 1.0a with RSA-SHA1: the PEM file holding the consumer's private key (`~` is the home folder).
    public var privateKeyFile: String?
    /// The git hosts (`host` or `host:port`) whose HTTPS remotes take this provider's tokens: a git
    /// credential helper answers for them.
    public var gitHosts: [String] = []
    /// Where a sign-in on another device may send the person (`ProviderFile.deviceVerificationHosts`); empty: the provider's own hosts.
    public var deviceVerificationHosts: [String] = []
    /// RFC 8628's device authorization endpoint: a sign-in finished on another device; nil: none.
    public var deviceAuthorizationEndpoint: URL?
    /// RFC 9126's pushed authorization request endpoint: the authorization request is sent
    /// there first, and the page is given only `client_id` and the `request_uri` it answers.
    public var pushedAuthorizationRequestEndpoint: URL?
    /// RFC 9126 §5's `require_pushed_authorization_requests`: the provider takes no other kind
    /// of authorization request, so a sign-in without the endpoint is refused here.
    public var requirePushedAuthorizationRequests = false
    /// The user name git sends with the token (GitHub takes any, GitLab wants `oauth2`).
    public var gitUsername: String?
    /// The scopes git needs (`git_scopes`): what the git helper asks for, and git's token carries where
    /// the provider can narrow one; empty: the whole sign-in.
    public var gitScopes: [String] = []
    /// Which account git uses, by rule: a key naming a remote (`github.com/work-org/`: every remote
    /// whose host and path start so) or a directory (`~/src/work`, `/srv/repos`: every repository
    /// in it), its value an account's e-mail address or name. The longest rule that matches wins.
    public var gitAccounts: [String: String] = [:]
    /// The `prompt` value that has the provider let the person choose an account (OpenID Connect's
    /// `select_account`, which Google, Microsoft and GitHub take); nil: the provider has none.
    public var selectAccountPrompt: String?
    /// The authorization request parameter that names the account meant (OpenID Connect's
    /// `login_hint`; GitHub's is `login`); nil: the provider takes none.
    public var loginHintParameter: String?
    /// RFC 9449: the provider binds tokens to a key Latchkey holds (`dpop` in its file, or ES256 among
    /// its discovery's `dpop_signing_alg_values_supported`): every token request carries a proof, and
    /// a bound access token goes to a resource with one (`ResourceAuthorization`).
    public var dpop = false
    /// How a narrower token is had (`narrowing`): by refresh unless the file (or discovery) says otherwise.
    public var narrowing = NarrowingMethod.refresh
    /// With `private_key_jwt` and no `private_key_file`: the client key Latchkey keeps for this provider
    /// (`ClientKey.stored`, from the client secret store; never in a file of settings).
    public var clientKey: String?
    /// `client_credentials`: tokens in the client's own name, asked for when needed (no person, no refresh token).
    public var grant = Grant.authorizationCode
    /// The organisation's identity provider: people sign in there, once, for every MCP server that
    /// takes its ID-JAGs (Enterprise-Managed Authorization).
    public var enterpriseIdentityProvider = false
    /// With the `id_jag` grant: the id of that identity provider's provider file.
    public var identityProvider: String?
    /// Seconds a sign-in may go unrenewed before the provider ends it, where the provider documents it
    /// but does not say it in its answers (`idle_lifetime`: Keycloak's SSO Session Idle, Okta's and
    /// Auth0's inactivity lifetimes); each renewal starts it again. Nil: unknown.
    public var idleLifetime: TimeInterval?
    /// Seconds a sign-in lasts from when the person signed in, however often it is renewed
    /// (`session_lifetime`: Keycloak's SSO Session Max, Auth0's absolute lifetime, seven days for a
    /// Google app in testing); nil: unknown.
    public var sessionLifetime: TimeInterval?
    /// What each scope lets a program do, in words a person asked about it reads
    /// (`"read_repository": "read your repositories"`); a scope not named is shown by its name.
    public var scopeDescriptions: [String: String] = [:]

    public init(
        id: String, displayName: String, issuer: URL? = nil, authorizationEndpoint: URL, tokenEndpoint: URL,
        revocationEndpoint: URL? = nil, userinfoEndpoint: URL? = nil, clientID: String, clientSecret: String? = nil,
        clientAuthentication: ClientAuthentication = .none, redirectURI: URL, scopes: [String], usePKCE: Bool = true,
        useNonce: Bool = true, idTokenIssuer: String? = nil, errorAliases: [String: String] = [:],
        authorizationParameters: [String: String] = [:], profile: ProfileMapping = ProfileMapping(),
        registrationHint: String? = nil, userAgents: [UserAgentKind] = [.embedded], preferredUserAgent: UserAgentKind? = nil,
        resource: URL? = nil, jwksURI: URL? = nil, idTokenSigningAlgorithms: [String] = IDTokenSignature.defaultAlgorithms,
        authProtocol: AuthProtocol = .oauth2, requestTokenEndpoint: URL? = nil, signatureMethod: OAuth1Signature.Method = .hmacSHA1,
        privateKeyFile: String? = nil
    ) throws {
        self.id = id
        self.displayName = displayName
        self.issuer = issuer
        self.requiresIssuerInResponse = false
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clientAuthentication = clientAuthentication
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.usePKCE = usePKCE
        self.useNonce = useNonce
        self.idTokenIssuer = idTokenIssuer
        self.errorAliases = errorAliases
        self.authorizationParameters = authorizationParameters
        self.profile = profile
        self.registrationHint = registrationHint
        self.userAgents = userAgents
        self.preferredUserAgent = preferredUserAgent
        self.resource = resource
        self.jwksURI = jwksURI
        self.idTokenSigningAlgorithms = idTokenSigningAlgorithms
        self.authProtocol = authProtocol
        self.requestTokenEndpoint = requestTokenEndpoint
        self.signatureMethod = signatureMethod
        self.privateKeyFile = privateKeyFile
        try validate()
    }

    /// What an authorization request adds to let the person choose an account (`choosing`: the
    /// provider's account chooser, without a hint, which would pass it over), or to name the account
    /// meant (`loginHint`). Only what the provider takes.
    public func accountChoiceParameters(loginHint: String?, choosing: Bool) -> [String: String] {
        if choosing { return selectAccountPrompt.map { ["prompt": $0] } ?? [:] }
        guard let loginHint, !loginHint.isEmpty, let parameter = loginHintParameter else { return [:] }
        return [parameter: loginHint]
    }

    /// The user agents this configuration can use: the provider's, less the
    /// browser when the redirect URI is not `http://127.0.0.1/…`, where its listener waits.
    public var usableUserAgents: [UserAgentKind] {
        userAgents.filter { $0 != .browser || Self.browserCanReturn(to: redirectURI) }
    }

    /// The user agent a sign-in uses: the person's choice, else the provider's first usable one.
    public var userAgent: UserAgentKind { preferredUserAgent ?? usableUserAgents.first ?? .embedded }

    /// Whether a browser sent to `url` reaches a loopback listener (which listens on 127.0.0.1 only).
    public static func browserCanReturn(to url: URL) -> Bool { url.scheme?.lowercased() == "http" && url.host == "127.0.0.1" }

    /// Whether the authentication method needs a secret that no layer gave:
    /// one a `ClientSecretStore` keeps may fill it in.
    public var lacksClientSecret: Bool { needsClientSecret && (clientSecret ?? "").isEmpty }

    /// Whether signing in takes a client secret: for OAuth 2 the authentication method
    /// says; for OAuth 1.0a every signature method but RSA-SHA1 signs with the consumer secret.
    public var needsClientSecret: Bool {
        authProtocol == .oauth1 ? signatureMethod != .rsaSHA1 : ![.none, .privateKeyJWT].contains(clientAuthentication)
    }

    /// Whether a person can sign in here: not to a client's own tokens, nor to a server reached through
    /// the identity provider whose file names no authorization endpoint of its own.
    public var hasSignInPage: Bool { grant == .authorizationCode || (grant == .idJAG && authorizationEndpoint != tokenEndpoint) }

    /// A summary without the client secret.
    public var description: String {
        if authProtocol == .oauth1 {
            return "\(displayName) (\(id)): OAuth 1.0a, authorize at \(authorizationEndpoint.host ?? "?"), consumer \(clientID), "
                + "\(signatureMethod.rawValue)\(clientSecret == nil ? "" : " with a secret")"
        }
        return "\(displayName) (\(id)): authorize at \(authorizationEndpoint.host ?? "?"), client \(clientID), "
            + "\(clientAuthentication.rawValue)\(clientSecret == nil ? "" : " with a secret"), PKCE \(usePKCE ? "on" : "off")"
            + (isOpenIDConnect ? ", nonce \(sendsNonce ? "on" : "off")" : "")
    }

    /// What a stored token is bound to: this client at this token endpoint, for this resource
    /// where the provider has one (two resources of one server never share a token). A loopback
    /// endpoint's port is left out, because the sandbox child listens on a new port at
    /// every launch; everything else (scheme, host, port, path, client id) must match.
    public var tokenBinding: String {
        return resource.map { "\(bindingWithoutResource) for \($0.absoluteString)" } ?? bindingWithoutResource
    }

    /// What a token of this setup was bound to before the resource was part of it: such a
    /// token is never used, but a sign-out still revokes it where it was issued.
    public var earlierTokenBinding: String? { resource == nil ? nil : bindingWithoutResource }

    private var bindingWithoutResource: String {
        var components = URLComponents(url: tokenEndpoint, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.host = components.host?.lowercased()
        components.scheme = components.scheme?.lowercased()
        if Self.isLoopback(tokenEndpoint) { components.port = nil }
        components.query = nil
        components.fragment = nil
        return "\(clientID) at \(components.string ?? tokenEndpoint.absoluteString)"
    }

    /// Whether the scopes ask for OpenID Connect (and so an ID token).
    public var isOpenIDConnect: Bool { authProtocol == .oauth2 && scopes.contains("openid") }

    /// Whether an authorization request carries a nonce: OpenID Connect, and a
    /// provider that echoes it.
    public var sendsNonce: Bool { isOpenIDConnect && useNonce }

    /// Placeholders `id_token_issuer` may hold, each filled from the ID token's own claim.
    static let issuerPlaceholders = ["{tenantid}": "tid"]
}
