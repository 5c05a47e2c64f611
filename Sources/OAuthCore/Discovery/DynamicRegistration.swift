import FoundationEssentials

/// What an authorization server gave a client that registered itself (RFC 7591 §3.2.1).
public struct ClientRegistration: Sendable, Equatable, CustomStringConvertible {
    public var clientID: String
    /// Only when the server made the client confidential after all.
    public var clientSecret: String?
    public var authentication: ProviderConfiguration.ClientAuthentication
    /// Lets the client read its registration back (RFC 7592 §2.1), to learn whether the server still knows it.
    public var registrationAccessToken: String?
    public var registrationClientURI: URL?

    /// Without the secret and the registration access token.
    public var description: String {
        "client \(clientID), \(authentication.rawValue)\(registrationClientURI.map { ", readable at \($0.absoluteString)" } ?? "")"
    }
}

/// Dynamic client registration (RFC 7591): a native public client, as RFC 8252
/// §8.4 has a desktop app be, since no secret stays secret on a person's computer.
public enum DynamicRegistration {
    /// Registers at `endpoint` as a native client with no secret
    /// (`token_endpoint_auth_method: none`) for `redirectURIs`.
    public static func register(
        at endpoint: URL, redirectURIs: [URL], clientName: String, network: Network = Network()
    ) async throws -> ClientRegistration {
        let metadata = JSONValue.object([
            .init("application_type", .string("native")), .init("client_name", .string(clientName)),
            .init("grant_types", .array([.string("authorization_code"), .string("refresh_token")])),
            .init("redirect_uris", .array(redirectURIs.map { .string($0.absoluteString) })),
            .init("response_types", .array([.string("code")])), .init("token_endpoint_auth_method", .string("none")),
        ])
        let request = HTTPRequest(
            method: "POST", url: endpoint,
            headers: ["Content-Type": "application/json", "Accept": "application/json", "User-Agent": OAuthCoreInfo.userAgent],
            body: Data(metadata.text(spaced: false).utf8), timeout: network.timeout)
        let response: HTTPResponse
        do {
            response = try await network.transport.send(request)
        } catch let error as TransportError {
            throw TokenClient.map(error, endpoint: .registration, secrets: [])
        }
        if response.status == 400, let answer = try? ProviderDiscovery.jsonObject(response, endpoint: .registration, accepting: [400]),
            let code = answer["error"]?.string
        {
            // RFC 7591 §3.2.2. What the server says is shown on one line, its code only if it looks like one.
            let code = Redaction.safeCode(code)
            let description = answer["error_description"]?.string.map(Redaction.clip)
            throw OAuthError.invalidConfiguration(
                "the provider refused to register \(clientName): \(description ?? OAuthError.meaning(of: code)) (\(code)).")
        }
        let answer = try ProviderDiscovery.jsonObject(response, endpoint: .registration, accepting: [200, 201])
        return try registration(from: answer, asked: redirectURIs, endpoint: endpoint, clientName: clientName)
    }

    /// The registration a server answered, checked. `endpoint` is where it was made:
    /// the registration's own URI must be on the same origin, since its access token goes there.
    static func registration(from answer: JSONValue, asked redirectURIs: [URL], endpoint: URL, clientName: String = "this app")
        throws -> ClientRegistration
    {
        func fail(_ reason: String) -> OAuthError { .malformedResponse(endpoint: .registration, reason: reason) }
        guard let clientID = answer["client_id"]?.string, !clientID.isEmpty else { throw fail("it gave no client_id") }
        // §3.2.1: the server may change what was asked; a client must then use what it says.
        let secret = answer["client_secret"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        // Unsaid, RFC 7591 §2's default (client_secret_basic) where a secret came; else what was asked for.
        let method = answer["token_endpoint_auth_method"]?.string ?? (secret == nil ? "none" : "client_secret_basic")
        // A key is registered by whoever holds it (private_key_jwt): a registration that sent none cannot use one.
        guard let authentication = ProviderConfiguration.ClientAuthentication(rawValue: method), authentication != .privateKeyJWT else {
            throw OAuthError.invalidConfiguration(
                "the provider registered \(clientName) for client authentication “\(Redaction.safeCode(method))”, which \(clientName) does not do."
            )
        }
        if authentication != .none, secret == nil {
            throw fail("it asks for \(method) but gave no client_secret")
        }
        if let granted = answer["redirect_uris"]?.strings, !Set(redirectURIs.map(\.absoluteString)).isSubset(of: granted) {
            throw OAuthError.invalidConfiguration("the provider registered \(clientName) without the redirect URI it needs.")
        }
        let clientURI = answer["registration_client_uri"]?.string.flatMap(URL.init(string:))
        return ClientRegistration(
            clientID: clientID, clientSecret: authentication == .none ? nil : secret, authentication: authentication,
            registrationAccessToken: answer["registration_access_token"]?.string.flatMap { $0.isEmpty ? nil : $0 },
            registrationClientURI: clientURI.flatMap { isSameOrigin($0, as: endpoint) ? $0 : nil })
    }

    /// Scheme, host and port equal: the registration access token goes nowhere the registration was not made.
    public static func isSameOrigin(_ url: URL, as other: URL) -> Bool {
        func origin(_ url: URL) -> [String]? {
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
            return [scheme, host, String(port)]
        }
        guard let a = origin(url), let b = origin(other) else { return false }
        return a == b
    }

    /// What reading a registration back (RFC 7592 §2.1) told.
    public enum ReadBack: Sendable, Equatable {
        /// The server knows the client. It may have replaced the registration access
        /// token or the client secret (§3): those then replace the ones kept.
        case known(newAccessToken: String?, newClientSecret: String?)
        /// 401: the server does not know the client (any more), or not with this token.
        case forgotten
        /// No clear answer (offline, 403, a 5xx): keep the registration; a sign-in will tell.
        case unclear
    }

    /// Reads the registration back with its access token (RFC 7592 §2.1).
    public static func readBack(
        clientURI: URL, accessToken: String, network: Network = Network()
    ) async -> ReadBack {
        guard
            let response = try? await ProviderDiscovery.getJSON(
                clientURI, endpoint: .registration, headers: ["Authorization": "Bearer \(accessToken)"], network: network)
        else { return .unclear }
        switch response.status {
        case 200:
            let answer = try? ProviderDiscovery.jsonObject(response, endpoint: .registration)
            func fresh(_ key: String, _ old: String?) -> String? {
                answer?[key]?.string.flatMap { $0.isEmpty || $0 == old ? nil : $0 }
            }
            return .known(newAccessToken: fresh("registration_access_token", accessToken), newClientSecret: fresh("client_secret", nil))
        case 401: return .forgotten
        default: return .unclear
        }
    }
}
