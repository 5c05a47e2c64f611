import FoundationEssentials
import Loopback

extension ProviderConfiguration {
    /// Checks the security rules: https endpoints except on
    /// loopback, a redirect URI an embedded agent can recognise, a secret when
    /// the authentication method needs one.
    ///
    /// - Parameter place: where a missing credential ("CLIENT_ID", "CLIENT_SECRET")
    ///   would be read from, in words ("~/.config/app/github.json or set …"); the
    ///   catalog that loaded the configuration knows, so the sentence can say.
    public func validate(place: (_ credential: String) -> String? = { _ in nil }) throws {
        guard !id.isEmpty else { throw Self.fail("the provider has no id.") }
        try validateEndpoints()
        try validateCredentials(place: place)
        try Self.validateRedirectURI(redirectURI)
        try validateIssuers()
        try validateUserAgents()
        try validateRequest()
    }

    private static func fail(_ reason: String) -> OAuthError { .invalidConfiguration(reason) }

    /// Every endpoint on https, or plain http on this computer; a resource as RFC 8707 §2 has it.
    private func validateEndpoints() throws {
        // Named as the provider file names them (its table of fields).
        func key(_ path: PartialKeyPath<ProviderFile>) -> String { ProviderFile.key(of: path) }
        let endpoints: [(String, URL?)] = [
            (key(\.authorizationEndpoint), authorizationEndpoint), (key(\.tokenEndpoint), tokenEndpoint),
            (key(\.revocationEndpoint), revocationEndpoint), (key(\.userinfoEndpoint), userinfoEndpoint),
            (key(\.profile) + ".url_template_endpoint", profile.urlTemplateEndpoint), (key(\.jwksURI), jwksURI),
            (key(\.requestTokenEndpoint), requestTokenEndpoint), (key(\.deviceAuthorizationEndpoint), deviceAuthorizationEndpoint),
            (key(\.pushedAuthorizationRequestEndpoint), pushedAuthorizationRequestEndpoint),
        ]
        for (name, url) in endpoints {
            guard let url else { continue }
            guard url.host?.isEmpty == false else { throw Self.fail("\(name) \(url.absoluteString) has no host.") }
            guard Self.isSecureOrLoopback(url) else {
                throw Self.fail("\(name) must use https (plain http is allowed only on this computer): \(url.absoluteString)")
            }
        }
        // RFC 8707 §2: an absolute URI without a fragment; and, holding the tokens, on https or this computer.
        if let resource {
            guard resource.scheme != nil, resource.host?.isEmpty == false, resource.fragment == nil, Self.isSecureOrLoopback(resource)
            else {
                throw Self.fail("resource must be an https URL without a fragment (http only on this computer): \(resource.absoluteString)")
            }
        }
    }

    /// A client id; a secret where the authentication method needs one; OAuth 1.0a's own rules.
    private func validateCredentials(place: (_ credential: String) -> String?) throws {
        guard !clientID.isEmpty else {
            throw Self.fail(
                "there is no client id for \(displayName)."
                    + (place("CLIENT_ID").map { " Put {\"client_id\": \"…\"} in \($0)." } ?? "")
                    + (registrationHint.map { " \($0)" } ?? ""))
        }
        if authProtocol == .oauth1 {
            try validateOAuth1(place: place)
        } else if requestTokenEndpoint != nil {
            throw Self.fail(
                "request_token_endpoint belongs to OAuth 1.0a: add \"protocol\": \"oauth1\" to the provider file, or remove it.")
        }
        // An ID-JAG and a client assertion are for the issuer (their aud): they go to its own origin alone,
        // where nobody else could redeem them as the person or the client.
        if grant == .idJAG || clientAuthentication == .privateKeyJWT, let issuer, Self.origin(issuer) != Self.origin(tokenEndpoint) {
            throw Self.fail(
                "\(displayName)'s token endpoint (\(tokenEndpoint.absoluteString)) is not at its issuer (\(issuer.absoluteString)): what is signed for the issuer is sent there alone."
            )
        }
        if grant == .idJAG, issuer == nil {
            throw Self.fail(
                "\(displayName) is reached through the organisation's identity provider (id_jag), whose ID-JAGs name its issuer: set issuer."
            )
        }
        if grant == .idJAG, (identityProvider ?? "").isEmpty || resource == nil {
            throw Self.fail(
                "\(displayName) is reached through the organisation's identity provider (id_jag): name that provider in identity_provider, and the MCP server in resource."
            )
        }
        if grant == .clientCredentials, authProtocol == .oauth1 || clientAuthentication == .none {
            throw Self.fail(
                authProtocol == .oauth1
                    ? "client_credentials is an OAuth 2.0 grant; an OAuth 1.0a provider cannot use it."
                    : "\(displayName) gets tokens in the client's own name (client_credentials), so the client must prove who it is: set client_authentication to client_secret_basic (with its client secret) or private_key_jwt (with private_key_file)."
            )
        }
        if authProtocol == .oauth2, clientAuthentication == .privateKeyJWT, (privateKeyFile ?? "").isEmpty, clientKey == nil {
            throw Self.fail(
                "\(displayName) authenticates with private_key_jwt: name the client's private key (a PEM file) in private_key_file, or have a key made and kept for it where client secrets are kept."
            )
        }
        if authProtocol == .oauth2, needsClientSecret, (clientSecret ?? "").isEmpty {
            throw Self.fail(
                "\(displayName) needs a client secret (\(clientAuthentication.rawValue))."
                    + (place("CLIENT_SECRET").map { " Put it in \($0)." } ?? ""))
        }
    }

    /// The issuer an answer must name, the ID tokens' issuer and the algorithms they may be signed with.
    private func validateIssuers() throws {
        if requiresIssuerInResponse, issuer == nil {
            throw Self.fail("authorization_response_iss_parameter_supported needs the issuer it is compared with.")
        }
        if let unsupported = idTokenSigningAlgorithms.first(where: { !IDTokenSignature.supportedAlgorithms.contains($0) })
            ?? (idTokenSigningAlgorithms.isEmpty ? "nothing" : nil)
        {
            throw Self.fail(
                "id_token_signing_alg_values may hold \(IDTokenSignature.supportedAlgorithms.sorted().joined(separator: ", ")), not \(unsupported): "
                    + "never none, never an HMAC (its key would be public).")
        }
        if let idTokenIssuer {
            var sample = idTokenIssuer
            for placeholder in Self.issuerPlaceholders.keys {
                sample = sample.replacing(placeholder, with: "tenant")
            }
            guard !sample.contains("{"), let url = URL(string: sample), url.host?.isEmpty == false, Self.isSecureOrLoopback(url) else {
                throw Self.fail(
                    "id_token_issuer \(idTokenIssuer) must be an https URL (http only on this computer); "
                        + "the only placeholder it may hold is {tenantid}.")
            }
        }
    }

    /// Where a sign-in may happen, and a redirect URI for each place.
    private func validateUserAgents() throws {
        if let browserRedirectURI,
            !Self.browserCanReturn(to: browserRedirectURI) || browserRedirectURI.port == nil
                || browserRedirectURI.query != nil || browserRedirectURI.fragment != nil
        {
            throw Self.fail(
                "browser_redirect_uri must be http://127.0.0.1 with a port and a path, such as http://127.0.0.1:49152/callback, "
                    + "not \(browserRedirectURI.absoluteString).")
        }
        guard !userAgents.isEmpty, Set(userAgents).count == userAgents.count else {
            throw Self.fail("user_agents must list \"embedded\", \"browser\" or both, each once.")
        }
        if let preferredUserAgent, !userAgents.contains(preferredUserAgent) {
            throw Self.fail(
                "user_agent is \"\(preferredUserAgent.rawValue)\", but \(displayName) allows only "
                    + userAgents.map { "\"\($0.rawValue)\"" }.joined(separator: " and ") + ".")
        }
        // RFC 8252 §7.3: the browser comes back to a listener on this computer, over plain http.
        // Where the window is allowed too, another redirect URI only takes the browser off the list.
        if usableUserAgents.isEmpty || preferredUserAgent.map({ !usableUserAgents.contains($0) }) == true {
            throw Self.fail(
                "signing in through the browser needs a redirect URI on http://127.0.0.1, such as http://127.0.0.1/callback "
                    + "(RFC 8252 §7.3), not \(redirectURI.absoluteString).")
        }
    }

    /// The scopes and extra parameters of the authorization request.
    private func validateRequest() throws {
        if let bad = scopes.first(where: { $0.isEmpty || $0.contains(" ") || $0.contains(",") }) {
            throw Self.fail("the scope “\(bad)” is empty or holds a space or comma; list scopes one by one.")
        }
        let reserved: Set = [
            "response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
            "code_challenge_method", "nonce",
        ]
        if let clash = authorizationParameters.keys.first(where: reserved.contains) {
            throw Self.fail("authorization_parameters may not set \(clash); OAuthCore sets it.")
        }
        if let hint = loginHintParameter, reserved.contains(hint) || hint == "prompt" || hint.isEmpty {
            throw Self.fail("login_hint_parameter may not be “\(hint)”: that parameter says something else.")
        }
        // The answer is read from the address the provider sends the person to; a
        // form posted there (form_post) or a web message never reaches the flow.
        if let mode = authorizationParameters["response_mode"], !["query", "fragment"].contains(mode) {
            throw Self.fail(
                "response_mode=\(mode) cannot be used: OAuthCore reads the provider's answer from the address it is sent to "
                    + "(query or fragment), never from a posted form. Remove response_mode from the provider file.")
        }
    }

    /// RFC 5849's own rules: three endpoints, a secret or a key to sign with, and
    /// PLAINTEXT — which sends the secrets themselves — only over https (§3.4.4).
    private func validateOAuth1(place: (_ credential: String) -> String?) throws {
        func fail(_ reason: String) -> OAuthError { .invalidConfiguration(reason) }
        guard requestTokenEndpoint != nil else {
            throw fail("an OAuth 1.0a provider needs request_token_endpoint, where a sign-in gets its request token.")
        }
        guard revocationEndpoint == nil else {
            throw fail("OAuth 1.0a has no revocation endpoint; remove revocation_endpoint from the provider file.")
        }
        guard resource == nil else { throw fail("resource belongs to OAuth 2.0; an OAuth 1.0a provider cannot use it.") }
        switch signatureMethod {
        case .hmacSHA1, .plaintext:
            guard !(clientSecret ?? "").isEmpty else {
                throw fail(
                    "\(displayName) needs its consumer secret (the client secret) to sign with \(signatureMethod.rawValue)."
                        + (place("CLIENT_SECRET").map { " Put it in \($0)." } ?? ""))
            }
        case .rsaSHA1:
            guard let privateKeyFile, !privateKeyFile.isEmpty else {
                throw fail("RSA-SHA1 signs with the consumer's private key: name its PEM file in private_key_file.")
            }
        }
        if signatureMethod == .plaintext {
            let endpoints = [requestTokenEndpoint, authorizationEndpoint, tokenEndpoint, userinfoEndpoint, profile.urlTemplateEndpoint]
            if let plain = endpoints.compactMap({ $0 }).first(where: { $0.scheme?.lowercased() != "https" }) {
                throw fail(
                    "PLAINTEXT sends the consumer and token secrets as they are, so it is used only over https (RFC 5849 §3.4.4), not at \(plain.absoluteString)."
                )
            }
        }
        let reserved = ["oauth_token", "oauth_callback", "oauth_verifier"]
        if let clash = authorizationParameters.keys.first(where: reserved.contains) {
            throw fail("authorization_parameters may not set \(clash); OAuthCore sets it.")
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
    package static func isLoopback(_ url: URL) -> Bool {
        guard let host = url.host else { return false }
        return Loopback.isLoopback(host: host)
    }

    public static func isSecureOrLoopback(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": true
        case "http": isLoopback(url)
        default: false
        }
    }

    /// Scheme, host and port, as a browser compares origins.
    static func origin(_ url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443))"
    }
}
