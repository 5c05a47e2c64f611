import Foundation

/// A provider file made from an OpenID Connect issuer's discovery document
/// (OpenID Connect Discovery 1.0 §4): the endpoints it names, for a public
/// client on this computer (RFC 8252 §8.4) that signs in in the window or the
/// browser with PKCE where the provider supports it. The person then gives the
/// client id (and, if their registration has one, the secret).
public enum ProviderDiscovery {
    /// The provider file's object for `issuer`, read from
    /// `<issuer>/.well-known/openid-configuration`. Throws a sentence when the
    /// issuer is not an https (or loopback) URL, the document cannot be
    /// fetched or read, names another issuer (§4.3), or an endpoint off https.
    public static func providerFile(
        issuer text: String, transport: any HTTPTransport = CurlTransport.shared, timeout: Double = 15
    ) async throws -> [String: Any] {
        let issuer = Issuer.normalised(text.trimmingCharacters(in: .whitespaces))
        guard let url = URL(string: issuer), let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil,
            ProviderConfiguration.isSecureOrLoopback(url)
        else {
            throw OAuthError.invalidConfiguration(
                "“\(text)” is not an issuer URL: it must be https://… (http only on this computer), with no query or fragment.")
        }
        let location = URL(string: issuer + "/.well-known/openid-configuration")!
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(method: "GET", url: location, headers: ["Accept": "application/json", "User-Agent": OAuthCoreInfo.userAgent],
                            timeout: timeout))
        } catch let error as TransportError {
            throw TokenClient.map(error, endpoint: .discovery, secrets: [])
        }
        // Not there at all: most often a URL that is not the issuer (a console page, a path too many or too few).
        if response.status == 404 || response.status == 410 {
            throw OAuthError.invalidConfiguration(
                "\(issuer) has no OpenID Connect discovery document (\(location.absoluteString) answered HTTP \(response.status)). "
                    + "Check that it is the provider's issuer URL.")
        }
        guard response.status == 200 else { throw OAuthError.httpStatus(response.status, endpoint: .discovery) }
        guard !response.body.isEmpty else { throw OAuthError.emptyResponse(endpoint: .discovery) }
        guard let document = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] else {
            let looksLikeHTML = response.header("content-type")?.lowercased().contains("html") == true
            throw looksLikeHTML
                ? OAuthError.htmlInsteadOfJSON(endpoint: .discovery)
                : OAuthError.malformedResponse(endpoint: .discovery, reason: "not a JSON object")
        }
        return try providerFile(issuer: issuer, host: host, port: url.port, path: url.path, document: document)
    }

    /// The provider file for a discovery document already read; `issuer` normalised.
    static func providerFile(issuer: String, host: String, port: Int?, path: String = "", document: [String: Any]) throws
        -> [String: Any]
    {
        let issuerIsLoopback = URL(string: issuer).map(ProviderConfiguration.isLoopback) ?? false
        func fail(_ reason: String) -> OAuthError { .malformedResponse(endpoint: .discovery, reason: reason) }
        guard let named = document["issuer"] as? String else { throw fail("it names no issuer") }
        guard Issuer.normalised(named) == issuer else {
            throw OAuthError.invalidConfiguration(
                "the discovery document of \(issuer) names another issuer (\(named)), so it cannot be trusted (OpenID Connect Discovery §4.3).")
        }
        var file: [String: Any] = [
            "id": id(host: host, port: port, path: path), "display_name": host + (port.map { ":\($0)" } ?? "") + path,
            "issuer": issuer,
            "client_authentication": "none", "redirect_uri": "http://127.0.0.1/callback",
            "user_agents": ["embedded", "browser"],
            "profile": ["name": "name", "email": "email", "picture": "picture", "url": "profile"],
            "registration_hint":
                "Register Latchkey with \(issuer) as a native (public) client, with the redirect URI http://127.0.0.1/callback.",
        ]
        for (key, required) in [
            ("authorization_endpoint", true), ("token_endpoint", true), ("userinfo_endpoint", false), ("revocation_endpoint", false),
        ] {
            guard let value = document[key] as? String else {
                if required { throw fail("it has no \(key)") }
                continue
            }
            // Plain http on this computer only for an issuer on this computer: a remote provider's
            // document naming a local port would send codes to whoever listens there.
            guard let url = URL(string: value), url.host?.isEmpty == false,
                url.scheme?.lowercased() == "https" || (issuerIsLoopback && ProviderConfiguration.isSecureOrLoopback(url))
            else {
                throw OAuthError.invalidConfiguration(
                    "the discovery document's \(key) must be an https URL (http only for a provider on this computer): \(value)")
            }
            file[key] = value
        }
        let supported = Set(document["scopes_supported"] as? [String] ?? ["openid", "profile", "email"])
        file["scopes"] = ["openid"] + ["profile", "email", "offline_access"].filter(supported.contains)
        // A public client always sends PKCE (RFC 8252 §8.1); many servers accept it without listing it.
        // Off only where the document lists methods and S256 is not among them.
        file["pkce"] = (document["code_challenge_methods_supported"] as? [String])?.contains("S256") ?? true
        return file
    }

    /// `id.example.com` → `id-example-com`; a port and a path are kept
    /// (`127-0-0-1-8080`, `sso-example-com-realms-staff`), so two issuers on one host differ.
    static func id(host: String, port: Int?, path: String = "") -> String {
        let name = (host + (port.map { ":\($0)" } ?? "") + path).lowercased()
            .map { $0.isASCII && ($0.isLetter || $0.isNumber) ? String($0) : "-" }.joined()
        return name.split(separator: "-").joined(separator: "-")
    }
}
