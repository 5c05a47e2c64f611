import Foundation

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
        at endpoint: URL, redirectURIs: [URL], clientName: String, transport: any HTTPTransport = CurlTransport.shared,
        timeout: Double = 15
    ) async throws -> ClientRegistration {
        let metadata: [String: Any] = [
            "client_name": clientName, "application_type": "native", "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "redirect_uris": redirectURIs.map(\.absoluteString),
        ]
        let request = HTTPRequest(
            method: "POST", url: endpoint,
            headers: ["Content-Type": "application/json", "Accept": "application/json", "User-Agent": OAuthCoreInfo.userAgent],
            body: try JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys]), timeout: timeout)
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as TransportError {
            throw TokenClient.map(error, endpoint: .registration, secrets: [])
        }
        if response.status == 400, let answer = try? ProviderDiscovery.jsonObject(response, endpoint: .registration, accepting: [400]),
            let code = answer["error"] as? String
        {
            // RFC 7591 §3.2.2. What the server says is shown, without anything it could have echoed back.
            let description = (answer["error_description"] as? String).map { Redaction.redact($0, removing: []) }
            throw OAuthError.invalidConfiguration(
                "the provider refused to register Latchkey: \(description ?? OAuthError.meaning(of: code)) (\(code)).")
        }
        let answer = try ProviderDiscovery.jsonObject(response, endpoint: .registration, accepting: [200, 201])
        return try registration(from: answer, asked: redirectURIs)
    }

    /// The registration a server answered, checked.
    static func registration(from answer: [String: Any], asked redirectURIs: [URL]) throws -> ClientRegistration {
        func fail(_ reason: String) -> OAuthError { .malformedResponse(endpoint: .registration, reason: reason) }
        guard let clientID = answer["client_id"] as? String, !clientID.isEmpty else { throw fail("it gave no client_id") }
        // §3.2.1: the server may change what was asked; a client must then use what it says.
        let method = (answer["token_endpoint_auth_method"] as? String) ?? "none"
        guard let authentication = ProviderConfiguration.ClientAuthentication(rawValue: method) else {
            throw OAuthError.invalidConfiguration(
                "the provider registered Latchkey for client authentication “\(method)”, which Latchkey does not do.")
        }
        let secret = (answer["client_secret"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        if authentication != .none, secret == nil {
            throw fail("it asks for \(method) but gave no client_secret")
        }
        if let granted = answer["redirect_uris"] as? [String], !Set(redirectURIs.map(\.absoluteString)).isSubset(of: granted) {
            throw OAuthError.invalidConfiguration("the provider registered Latchkey without the redirect URI it needs.")
        }
        let clientURI = (answer["registration_client_uri"] as? String).flatMap(URL.init(string:))
        return ClientRegistration(
            clientID: clientID, clientSecret: authentication == .none ? nil : secret, authentication: authentication,
            registrationAccessToken: (answer["registration_access_token"] as? String).flatMap { $0.isEmpty ? nil : $0 },
            registrationClientURI: clientURI.flatMap { ProviderConfiguration.isSecureOrLoopback($0) ? $0 : nil })
    }

    /// Whether the server still knows the client, read as RFC 7592 §2.1 reads a
    /// registration: true for 200, false for 401, 403 or 404 (a client the server
    /// forgot), nil when there is no way to ask or no clear answer (offline, a 5xx):
    /// the registration is then kept, and a sign-in will tell.
    public static func isKnown(
        clientURI: URL, accessToken: String, transport: any HTTPTransport = CurlTransport.shared, timeout: Double = 15
    ) async -> Bool? {
        guard
            let response = try? await ProviderDiscovery.getJSON(
                clientURI, endpoint: .registration, headers: ["Authorization": "Bearer \(accessToken)"], transport: transport,
                timeout: timeout)
        else { return nil }
        switch response.status {
        case 200: return true
        case 401, 403, 404: return false
        default: return nil
        }
    }
}
