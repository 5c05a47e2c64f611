import Foundation
import Loopback

/// Everything OAuthCore needs to know about one provider, loaded from JSON.
///
/// A provider that needs nothing special is just a file of this shape; a
/// `ProviderCatalog` finds them and layers the person's client id and secret
/// over them, which never ship with a preset.
public struct ProviderConfiguration: Codable, Sendable, Equatable, CustomStringConvertible {
    /// How the app proves who it is at the token endpoint (RFC 6749 §2.3, OIDC Core §9).
    public enum ClientAuthentication: String, Codable, Sendable {
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        case none
    }

    /// What shows the provider's page (RFC 8252 §4): a web view in the app's own
    /// window, or the person's default browser, which returns through a loopback listener.
    public enum UserAgentKind: String, Codable, Sendable, CaseIterable {
        case embedded
        case browser
    }

    public var id: String
    public var displayName: String
    /// The provider's issuer identifier. Endpoints given as paths (`/oauth/token`)
    /// are appended to it, so one preset serves gitlab.com and a self-hosted GitLab.
    public var issuer: URL?
    public var authorizationEndpoint: URL
    public var tokenEndpoint: URL
    public var revocationEndpoint: URL?
    public var userinfoEndpoint: URL?
    public var clientID: String
    public var clientSecret: String?
    public var clientAuthentication: ClientAuthentication
    public var redirectURI: URL
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

    enum CodingKeys: String, CodingKey {
        case id, issuer, scopes, profile
        case displayName = "display_name"
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case clientID = "client_id"
        case clientSecret = "client_secret"
        case clientAuthentication = "client_authentication"
        case redirectURI = "redirect_uri"
        case usePKCE = "pkce"
        case useNonce = "nonce"
        case idTokenIssuer = "id_token_issuer"
        case errorAliases = "error_aliases"
        case authorizationParameters = "authorization_parameters"
        case registrationHint = "registration_hint"
        case userAgents = "user_agents"
        case preferredUserAgent = "user_agent"
        case resource
        case jwksURI = "jwks_uri"
        case idTokenSigningAlgorithms = "id_token_signing_alg_values"
    }

    public init(
        id: String, displayName: String, issuer: URL? = nil, authorizationEndpoint: URL, tokenEndpoint: URL,
        revocationEndpoint: URL? = nil, userinfoEndpoint: URL? = nil, clientID: String, clientSecret: String? = nil,
        clientAuthentication: ClientAuthentication = .none, redirectURI: URL, scopes: [String], usePKCE: Bool = true,
        useNonce: Bool = true, idTokenIssuer: String? = nil, errorAliases: [String: String] = [:], authorizationParameters: [String: String] = [:], profile: ProfileMapping = ProfileMapping(),
        registrationHint: String? = nil, userAgents: [UserAgentKind] = [.embedded], preferredUserAgent: UserAgentKind? = nil,
        resource: URL? = nil, jwksURI: URL? = nil, idTokenSigningAlgorithms: [String] = IDTokenSignature.defaultAlgorithms
    ) throws {
        self.id = id
        self.displayName = displayName
        self.issuer = issuer
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
        try validate()
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        displayName = try c.decodeIfPresent(String.self, forKey: .displayName) ?? id
        issuer = try c.decodeIfPresent(URL.self, forKey: .issuer)
        authorizationEndpoint = try c.decode(URL.self, forKey: .authorizationEndpoint)
        tokenEndpoint = try c.decode(URL.self, forKey: .tokenEndpoint)
        revocationEndpoint = try c.decodeIfPresent(URL.self, forKey: .revocationEndpoint)
        userinfoEndpoint = try c.decodeIfPresent(URL.self, forKey: .userinfoEndpoint)
        clientID = try c.decode(String.self, forKey: .clientID)
        clientSecret = try c.decodeIfPresent(String.self, forKey: .clientSecret)
        clientAuthentication =
            try c.decodeIfPresent(ClientAuthentication.self, forKey: .clientAuthentication)
            ?? (clientSecret == nil ? .none : .clientSecretBasic)
        redirectURI = try c.decode(URL.self, forKey: .redirectURI)
        scopes = try c.decodeIfPresent([String].self, forKey: .scopes) ?? []
        usePKCE = try c.decodeIfPresent(Bool.self, forKey: .usePKCE) ?? true
        useNonce = try c.decodeIfPresent(Bool.self, forKey: .useNonce) ?? true
        idTokenIssuer = try c.decodeIfPresent(String.self, forKey: .idTokenIssuer)
        errorAliases = try c.decodeIfPresent([String: String].self, forKey: .errorAliases) ?? [:]
        authorizationParameters = try c.decodeIfPresent([String: String].self, forKey: .authorizationParameters) ?? [:]
        profile = try c.decodeIfPresent(ProfileMapping.self, forKey: .profile) ?? ProfileMapping()
        registrationHint = try c.decodeIfPresent(String.self, forKey: .registrationHint)
        userAgents = try c.decodeIfPresent([UserAgentKind].self, forKey: .userAgents) ?? [.embedded]
        preferredUserAgent = try c.decodeIfPresent(UserAgentKind.self, forKey: .preferredUserAgent)
        resource = try c.decodeIfPresent(URL.self, forKey: .resource)
        jwksURI = try c.decodeIfPresent(URL.self, forKey: .jwksURI)
        idTokenSigningAlgorithms =
            try c.decodeIfPresent([String].self, forKey: .idTokenSigningAlgorithms) ?? IDTokenSignature.defaultAlgorithms
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
    public var lacksClientSecret: Bool { clientAuthentication != .none && (clientSecret ?? "").isEmpty }

    /// A summary without the client secret.
    public var description: String {
        "\(displayName) (\(id)): authorize at \(authorizationEndpoint.host ?? "?"), client \(clientID), "
            + "\(clientAuthentication.rawValue)\(clientSecret == nil ? "" : " with a secret"), PKCE \(usePKCE ? "on" : "off")"
            + (isOpenIDConnect ? ", nonce \(sendsNonce ? "on" : "off")" : "")
    }

    /// What a stored token is bound to: this client at this token endpoint. A loopback
    /// endpoint's port is left out, because the sandbox child listens on a new port at
    /// every launch; everything else (scheme, host, port, path, client id) must match.
    public var tokenBinding: String {
        var components = URLComponents(url: tokenEndpoint, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.host = components.host?.lowercased()
        components.scheme = components.scheme?.lowercased()
        if Self.isLoopback(tokenEndpoint) { components.port = nil }
        components.query = nil
        components.fragment = nil
        return "\(clientID) at \(components.string ?? tokenEndpoint.absoluteString)"
    }

    /// Whether the scopes ask for OpenID Connect (and so an ID token).
    public var isOpenIDConnect: Bool { scopes.contains("openid") }

    /// Whether an authorization request carries a nonce: OpenID Connect, and a
    /// provider that echoes it.
    public var sendsNonce: Bool { isOpenIDConnect && useNonce }

    /// Placeholders `id_token_issuer` may hold, each filled from the ID token's own claim.
    static let issuerPlaceholders = ["{tenantid}": "tid"]

    // MARK: Validation

    /// Checks the security rules: https endpoints except on
    /// loopback, a redirect URI an embedded agent can recognise, a secret when
    /// the authentication method needs one.
    ///
    /// - Parameter place: where a missing credential ("CLIENT_ID", "CLIENT_SECRET")
    ///   would be read from, in words ("~/.config/app/github.json or set …"); the
    ///   catalog that loaded the configuration knows, so the sentence can say.
    public func validate(place: (_ credential: String) -> String? = { _ in nil }) throws {
        func fail(_ reason: String) -> OAuthError { .invalidConfiguration(reason) }
        guard !id.isEmpty else { throw fail("the provider has no id.") }
        let endpoints: [(String, URL?)] = [
            ("authorization_endpoint", authorizationEndpoint), ("token_endpoint", tokenEndpoint),
            ("revocation_endpoint", revocationEndpoint), ("userinfo_endpoint", userinfoEndpoint),
            ("profile.url_template_endpoint", profile.urlTemplateEndpoint), ("jwks_uri", jwksURI),
        ]
        for (name, url) in endpoints {
            guard let url else { continue }
            guard url.host?.isEmpty == false else { throw fail("\(name) \(url.absoluteString) has no host.") }
            guard Self.isSecureOrLoopback(url) else {
                throw fail("\(name) must use https (plain http is allowed only on this computer): \(url.absoluteString)")
            }
        }
        guard !clientID.isEmpty else {
            throw fail(
                "there is no client id for \(displayName)."
                    + (place("CLIENT_ID").map { " Put {\"client_id\": \"…\"} in \($0)." } ?? "")
                    + (registrationHint.map { " \($0)" } ?? ""))
        }
        if clientAuthentication != .none, (clientSecret ?? "").isEmpty {
            throw fail(
                "\(displayName) needs a client secret (\(clientAuthentication.rawValue))."
                    + (place("CLIENT_SECRET").map { " Put it in \($0)." } ?? ""))
        }
        try Self.validateRedirectURI(redirectURI)
        if let unsupported = idTokenSigningAlgorithms.first(where: { !IDTokenSignature.supportedAlgorithms.contains($0) })
            ?? (idTokenSigningAlgorithms.isEmpty ? "nothing" : nil)
        {
            throw fail(
                "id_token_signing_alg_values may hold \(IDTokenSignature.supportedAlgorithms.sorted().joined(separator: ", ")), not \(unsupported): "
                    + "never none, never an HMAC (its key would be public).")
        }
        // RFC 8707 §2: an absolute URI without a fragment; and, holding the tokens, on https or this computer.
        if let resource {
            guard resource.scheme != nil, resource.host?.isEmpty == false, resource.fragment == nil, Self.isSecureOrLoopback(resource)
            else {
                throw fail("resource must be an https URL without a fragment (http only on this computer): \(resource.absoluteString)")
            }
        }
        guard !userAgents.isEmpty, Set(userAgents).count == userAgents.count else {
            throw fail("user_agents must list \"embedded\", \"browser\" or both, each once.")
        }
        if let preferredUserAgent, !userAgents.contains(preferredUserAgent) {
            throw fail(
                "user_agent is \"\(preferredUserAgent.rawValue)\", but \(displayName) allows only "
                    + userAgents.map { "\"\($0.rawValue)\"" }.joined(separator: " and ") + ".")
        }
        // RFC 8252 §7.3: the browser comes back to a listener on this computer, over plain http.
        // Where the window is allowed too, another redirect URI only takes the browser off the list.
        if usableUserAgents.isEmpty || preferredUserAgent.map({ !usableUserAgents.contains($0) }) == true {
            throw fail(
                "signing in through the browser needs a redirect URI on http://127.0.0.1, such as http://127.0.0.1/callback "
                    + "(RFC 8252 §7.3), not \(redirectURI.absoluteString).")
        }
        if let idTokenIssuer {
            var sample = idTokenIssuer
            for placeholder in Self.issuerPlaceholders.keys {
                sample = sample.replacingOccurrences(of: placeholder, with: "tenant")
            }
            guard !sample.contains("{"), let url = URL(string: sample), url.host?.isEmpty == false,
                Self.isSecureOrLoopback(url)
            else {
                throw fail(
                    "id_token_issuer \(idTokenIssuer) must be an https URL (http only on this computer); "
                        + "the only placeholder it may hold is {tenantid}.")
            }
        }
        if let bad = scopes.first(where: { $0.isEmpty || $0.contains(" ") || $0.contains(",") }) {
            throw fail("the scope “\(bad)” is empty or holds a space or comma; list scopes one by one.")
        }
        let reserved: Set = [
            "response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
            "code_challenge_method", "nonce",
        ]
        if let clash = authorizationParameters.keys.first(where: reserved.contains) {
            throw fail("authorization_parameters may not set \(clash); OAuthCore sets it.")
        }
        // The answer is read from the address the provider sends the person to; a
        // form posted there (form_post) or a web message never reaches the flow.
        if let mode = authorizationParameters["response_mode"], !["query", "fragment"].contains(mode) {
            throw fail(
                "response_mode=\(mode) cannot be used: OAuthCore reads the provider's answer from the address it is sent to "
                    + "(query or fragment), never from a posted form. Remove response_mode from the provider file.")
        }
    }

    static func validateRedirectURI(_ uri: URL) throws {
        guard let scheme = uri.scheme?.lowercased(), !scheme.isEmpty else {
            throw OAuthError.invalidConfiguration("the redirect URI \(uri.absoluteString) has no scheme.")
        }
        guard uri.fragment == nil else {
            throw OAuthError.invalidConfiguration("the redirect URI may not have a fragment (RFC 6749 §3.1.2).")
        }
        switch scheme {
        case "https":
            guard uri.host?.isEmpty == false else {
                throw OAuthError.invalidConfiguration("the redirect URI \(uri.absoluteString) has no host.")
            }
        case "http":
            guard uri.host?.isEmpty == false else {
                throw OAuthError.invalidConfiguration("the redirect URI \(uri.absoluteString) has no host.")
            }
            guard isLoopback(uri) else {
                throw OAuthError.invalidConfiguration(
                    "a plain http redirect URI must point at this computer (127.0.0.1 or [::1], RFC 8252 §7.3).")
            }
        default:
            // RFC 8252 §7.1: a private-use scheme is a reversed domain name the app controls.
            guard scheme.contains(".") else {
                throw OAuthError.invalidConfiguration(
                    "the redirect URI scheme “\(scheme)” is not a reverse domain name such as com.example.app (RFC 8252 §7.1).")
            }
        }
    }

    /// An IP literal in 127.0.0.0/8 or ::1 (`Loopback`), never a name.
    static func isLoopback(_ url: URL) -> Bool {
        guard let host = url.host else { return false }
        return Loopback.isLoopback(host: host)
    }

    static func isSecureOrLoopback(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": true
        case "http": isLoopback(url)
        default: false
        }
    }
}
