import FoundationEssentials

/// A provider file made from an OpenID Connect issuer's discovery document
/// (OpenID Connect Discovery 1.0 §4): the endpoints it names, for a public
/// client on this computer (RFC 8252 §8.4) that signs in in the window or the
/// browser with PKCE where the provider supports it. The person then gives the
/// client id (and, if their registration has one, the secret).
public enum ProviderDiscovery {
    /// The provider file's object for `issuer`, from its discovery document (see
    /// `metadata(issuer:)`). Throws a sentence when the issuer is not an https (or
    /// loopback) URL, no document can be fetched or read, it names another issuer
    /// (OIDC Discovery §4.3, RFC 8414 §3.3), or an endpoint is off https.
    public static func providerFile(
        issuer text: String, network: Network = Network()
    ) async throws -> ProviderFile {
        let (issuer, _, document) = try await metadata(issuer: text, network: network)
        return try providerFile(issuer: issuer, document: document)
    }

    /// The authorization server's metadata, from the first of its well-known
    /// locations that has it (see `fetch`).
    static func metadata(issuer text: String, network: Network) async throws
        -> (issuer: String, url: URL, document: JSONValue)
    {
        let found = try await fetch(issuer: text, network: network)
        return (found.issuer, found.url, found.document)
    }

    /// A discovery document as it was found: where, and the answer that carried it
    /// (whose caching headers `DiscoveryCache` keeps).
    struct Found {
        let issuer: String
        let url: URL
        let location: URL
        let document: JSONValue
        let response: HTTPResponse
    }

    /// The issuer `text` names, exactly as written (less surrounding spaces), as a URL: https
    /// (http only on this computer), no query, no fragment; a sentence otherwise. Exactly: an
    /// issuer is compared octet for octet (RFC 8414 §3.3, RFC 9207 §2.4), a slash more or less included.
    static func issuerURL(_ text: String) throws -> (issuer: String, url: URL) {
        let issuer = text.trimmed(newlines: false)
        guard let url = URL(string: issuer), let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil,
            ProviderConfiguration.isSecureOrLoopback(url)
        else {
            throw OAuthError.invalidConfiguration(
                "“\(text)” is not an issuer URL: it must be https://… (http only on this computer), with no query or fragment.")
        }
        return (issuer, url)
    }

    /// Fetches the metadata from the first of the issuer's well-known locations that has it,
    /// in the order the MCP authorization specification (2026-07-28) gives (see
    /// `wellKnownLocations`). Only "not there" (404, 410) moves on to the next; anything
    /// else is the answer.
    static func fetch(issuer text: String, network: Network) async throws -> Found {
        let (issuer, url) = try issuerURL(text)
        for location in wellKnownLocations(of: url) {
            let response = try await getJSON(location, endpoint: .discovery, network: network)
            if response.status == 404 || response.status == 410 { continue }
            let document = try checkedIssuer(jsonObject(response, endpoint: .discovery), issuer: issuer)
            return Found(issuer: issuer, url: url, location: location, document: document, response: response)
        }
        // Not there at all: most often a URL that is not the issuer (a console page, a path too many or too few).
        throw OAuthError.invalidConfiguration(
            "\(issuer) has no discovery document (neither RFC 8414's metadata nor OpenID Connect's is at any of its well-known locations). "
                + "Check that it is the provider's issuer URL, exactly.")
    }

    /// Where an issuer's metadata may be, in the order they are tried. With a path
    /// (`https://id.example/tenant1`): RFC 8414's name inserted before it
    /// (`/.well-known/oauth-authorization-server/tenant1`), then OpenID Connect's inserted the
    /// same way, then OpenID Connect's appended (`/tenant1/.well-known/openid-configuration`).
    /// Without one: RFC 8414's, then OpenID Connect's. Never a location that drops the path.
    static func wellKnownLocations(of issuer: URL) -> [URL] {
        var origin = URLComponents(url: issuer, resolvingAgainstBaseURL: false)!
        let path = origin.percentEncodedPath.hasSuffix("/") ? String(origin.percentEncodedPath.dropLast()) : origin.percentEncodedPath
        origin.percentEncodedPath = ""
        let root = origin.string!
        let locations =
            path.isEmpty
            ? [root + "/.well-known/oauth-authorization-server", root + "/.well-known/openid-configuration"]
            : [
                root + "/.well-known/oauth-authorization-server" + path, root + "/.well-known/openid-configuration" + path,
                root + path + "/.well-known/openid-configuration",
            ]
        return locations.compactMap(URL.init(string:))
    }

    /// A metadata document that names `issuer` itself, octet for octet (RFC 8414 §3.3, OpenID
    /// Connect Discovery §4.3: no case folding, no slash more or less); anything else cannot be trusted.
    static func checkedIssuer(_ document: JSONValue, issuer: String) throws -> JSONValue {
        guard let named = document["issuer"]?.string else {
            throw OAuthError.malformedResponse(endpoint: .discovery, reason: "it names no issuer")
        }
        guard named == issuer else {
            if Issuer.normalised(named) == Issuer.normalised(issuer) {
                throw OAuthError.issuerSpelledOtherwise(asked: issuer, named: named)
            }
            throw OAuthError.invalidConfiguration(
                "the discovery document of \(issuer) names another issuer (\(Redaction.clip(named))), so it cannot be trusted "
                    + "(RFC 8414 §3.3, OpenID Connect Discovery §4.3; an issuer is compared exactly, a slash more or less included).")
        }
        return document
    }

    /// GET `url` for JSON; a transport failure becomes a sentence about `endpoint`.
    static func getJSON(
        _ url: URL, endpoint: OAuthError.Endpoint, headers: [String: String] = [:], network: Network
    ) async throws -> HTTPResponse {
        do {
            return try await network.transport.send(
                HTTPRequest(
                    method: "GET", url: url,
                    headers: ["Accept": "application/json", "User-Agent": OAuthCoreInfo.userAgent].merging(headers) { $1 },
                    timeout: network.timeout))
        } catch let error as TransportError {
            throw TokenClient.map(error, endpoint: endpoint, secrets: [])
        }
    }

    /// The JSON object a 200 (or `accepting`) answer carries; a sentence for anything else.
    static func jsonObject(_ response: HTTPResponse, endpoint: OAuthError.Endpoint, accepting: Set<Int> = [200]) throws
        -> JSONValue
    {
        guard accepting.contains(response.status) else { throw OAuthError.httpStatus(response.status, endpoint: endpoint) }
        guard !response.body.isEmpty else { throw OAuthError.emptyResponse(endpoint: endpoint) }
        guard let object = JSONValue.object(parsing: response.body) else {
            let looksLikeHTML = response.header("content-type")?.lowercased().contains("html") == true
            throw looksLikeHTML
                ? OAuthError.htmlInsteadOfJSON(endpoint: endpoint)
                : OAuthError.malformedResponse(endpoint: endpoint, reason: "not a JSON object")
        }
        return object
    }

    /// The provider file for a discovery document already read; `issuer` normalised.
    /// `programName` is what the registration hint tells the person to register.
    static func providerFile(issuer: String, document: JSONValue, programName: String = "this app") throws -> ProviderFile {
        let (issuer, url) = try issuerURL(issuer)
        let issuerIsLoopback = ProviderConfiguration.isLoopback(url)
        let names = names(of: url)
        let document = try checkedIssuer(document, issuer: issuer)
        var file = ProviderFile()
        file.id = .value(names.id)
        file.displayName = .value(names.place)
        file.issuer = .value(issuer)
        file.clientAuthentication = .value(.none)
        file.redirectURI = .value("http://127.0.0.1/callback")
        file.userAgents = .value([.embedded, .browser])
        file.profile = .value(Layered(["name", "email", "picture"].map { ($0, .value(.one($0))) } + [("url", .value(.one("profile")))]))
        file.registrationHint = .value(
            "Register \(programName) with \(issuer) as a native (public) client, with the redirect URI http://127.0.0.1/callback.")
        try readEndpoints(document, issuerIsLoopback: issuerIsLoopback, into: &file)
        // The algorithms its ID tokens may use: those it names that Latchkey checks (none of `none`, none of HMAC).
        if let named = document["id_token_signing_alg_values_supported"]?.strings {
            let usable = named.filter(IDTokenSignature.supportedAlgorithms.contains)
            guard !usable.isEmpty else {
                throw OAuthError.invalidConfiguration(
                    "\(issuer) signs its ID tokens only with \(named.prefix(4).map { Redaction.safeCode($0) }.joined(separator: ", ")), none of which can be checked here."
                )
            }
            file.idTokenSigningAlgorithms = .value(usable)
        }
        // RFC 9126 §5: a server that takes pushed requests only gets nothing else.
        if document["require_pushed_authorization_requests"]?.bool == true {
            file.requirePushedAuthorizationRequests = .value(true)
        }
        // RFC 9207 §3: a server that says it names itself in every answer is held to it.
        if document["authorization_response_iss_parameter_supported"]?.bool == true {
            file.requiresIssuerInResponse = .value(true)
        }
        // RFC 9449: a server that takes ES256 proofs gets them, and binds the sign-in's tokens to its key
        // (one that lists only other algorithms is used without; `"dpop": false` in a file turns it off).
        if document["dpop_signing_alg_values_supported"]?.strings?.contains("ES256") == true {
            file.dpop = .value(true)
        }
        // RFC 8693: where the server exchanges tokens, a program's narrower token is had that way.
        if document["grant_types_supported"]?.strings?.contains(TokenClient.tokenExchange) == true {
            file.narrowing = .value(.tokenExchange)
        }
        let supported = Set(document["scopes_supported"]?.strings ?? ["openid", "profile", "email"])
        file.scopes = .value(["openid"] + ["profile", "email", "offline_access"].filter(supported.contains))
        // A public client always sends PKCE (RFC 8252 §8.1); many servers accept it without listing it.
        // Off only where the document lists methods and S256 is not among them.
        file.pkce = .value(document["code_challenge_methods_supported"]?.strings?.contains("S256") ?? true)
        return file
    }

    /// The endpoints a discovery document names, each checked: https, or plain http on this computer
    /// only for an issuer on this computer (a remote provider's document naming a local port would
    /// send codes to whoever listens there).
    private static func readEndpoints(_ document: JSONValue, issuerIsLoopback: Bool, into file: inout ProviderFile) throws {
        let endpoints: [(String, WritableKeyPath<ProviderFile, Setting<String>>, required: Bool)] = [
            ("authorization_endpoint", \.authorizationEndpoint, true), ("token_endpoint", \.tokenEndpoint, true),
            ("userinfo_endpoint", \.userinfoEndpoint, false), ("revocation_endpoint", \.revocationEndpoint, false),
            ("jwks_uri", \.jwksURI, false), ("device_authorization_endpoint", \.deviceAuthorizationEndpoint, false),
            ("pushed_authorization_request_endpoint", \.pushedAuthorizationRequestEndpoint, false),
        ]
        for (key, path, required) in endpoints {
            guard let value = document[key]?.string else {
                if required { throw OAuthError.malformedResponse(endpoint: .discovery, reason: "it has no \(key)") }
                continue
            }
            guard let url = URL(string: value), url.host?.isEmpty == false,
                url.scheme?.lowercased() == "https" || (issuerIsLoopback && ProviderConfiguration.isSecureOrLoopback(url))
            else {
                throw OAuthError.invalidConfiguration(
                    "the discovery document's \(key) must be an https URL (http only for a provider on this computer): \(Redaction.clip(value))"
                )
            }
            file[keyPath: path] = .value(value)
        }
    }

    /// What an issuer (or a resource) is called where it has no name of its own: its place,
    /// host, port and path (`sso.example.com/realms/staff`, `127.0.0.1:8080`), and the id made
    /// of it (`sso-example-com-realms-staff`, `127-0-0-1-8080`), so two issuers on one host differ.
    static func names(of url: URL) -> (id: String, place: String) {
        let path = url.path == "/" ? "" : url.path
        let place = (url.host ?? "") + (url.port.map { ":\($0)" } ?? "") + path
        let id = place.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? String($0) : "-" }.joined()
        return (id.split(separator: "-").joined(separator: "-"), place)
    }
}
