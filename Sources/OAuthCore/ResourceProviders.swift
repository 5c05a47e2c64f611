import Foundation

/// A provider for a protected resource, made from nothing but its URL: the
/// resource names its authorization server (RFC 9728), the server describes
/// itself (RFC 8414 / OpenID Connect Discovery), and lets Latchkey register
/// (RFC 7591). The result is an ordinary provider file in the person's config
/// directory — `resource`, the endpoints, the client id it was given — so the
/// next run needs no network until it signs in, and the window lists it.
///
/// The registration access token (RFC 7592), when the server gives one, goes to
/// the client-secret store, never into the file.
public struct ResourceProviders: Sendable {
    public let catalog: ProviderCatalog
    public let secrets: any ClientSecretStore
    public let transport: any HTTPTransport
    public let timeout: Double
    /// What the person sees on the provider's consent page.
    public let clientName: String
    /// Registered for both user agents: the window intercepts it, and the browser's
    /// listener answers on it with any port (RFC 8252 §7.3).
    public let redirectURI: URL

    public init(
        catalog: ProviderCatalog, secrets: any ClientSecretStore, transport: any HTTPTransport = CurlTransport.shared,
        timeout: Double = 15, clientName: String = "Latchkey", redirectURI: URL = URL(string: "http://127.0.0.1/callback")!
    ) {
        self.catalog = catalog
        self.secrets = secrets
        self.transport = transport
        self.timeout = timeout
        self.clientName = clientName
        self.redirectURI = redirectURI
    }

    /// The provider id for a resource: its host, port and path (`127-0-0-1-8080-api-me`).
    public static func id(for resource: URL) throws -> String {
        let identifier = try ResourceDiscovery.identifier(of: resource)
        return ProviderDiscovery.id(host: identifier.host ?? "", port: identifier.port, path: identifier.path)
    }

    /// Where the registration access token of provider `id` is kept in the secret store.
    static func registrationKey(_ id: String) -> String { id + "__registration" }

    /// What `configuration(for:)` did, besides the configuration.
    public struct Outcome: Sendable {
        public let configuration: ProviderConfiguration
        /// Whether Latchkey registered itself just now (first use, or the server forgot it).
        public let registered: Bool
    }

    /// The configuration that signs in for `resource`: the saved one when there is
    /// one and the server still knows its client, else discovered and registered anew.
    public func configuration(for resource: URL) async throws -> Outcome {
        let identifier = try ResourceDiscovery.identifier(of: resource)
        let id = try Self.id(for: identifier)
        let file = catalog.userFile(for: id)
        var saved: [String: Any]?
        if FileManager.default.fileExists(atPath: file.path) {
            let object = try ProviderCatalog.readObject(file)
            guard object["resource"] as? String == identifier.absoluteString else {
                throw OAuthError.invalidConfiguration(
                    "\(file.path) describes another provider than \(identifier.absoluteString); move it away to sign in there.")
            }
            saved = object
        }
        if var saved, !(saved["client_id"] as? String ?? "").isEmpty {
            guard saved["registration_client_uri"] != nil, await isForgotten(saved, id: id) else {
                return Outcome(configuration: try await configured(id), registered: false)
            }
            // The server forgot the client it registered: register again, from a clean slate.
            saved["client_id"] = nil
            saved["registration_client_uri"] = nil
            try? await secrets.remove(for: Self.registrationKey(id))
            try? await secrets.remove(for: id)
        }
        return Outcome(configuration: try await discoverAndRegister(identifier, id: id, saved: saved), registered: true)
    }

    /// True only when the server says it no longer knows the client (RFC 7592 §2.1).
    private func isForgotten(_ saved: [String: Any], id: String) async -> Bool {
        guard let text = saved["registration_client_uri"] as? String, let uri = URL(string: text),
            let token = try? await secrets.load(for: Self.registrationKey(id))
        else { return false }
        return await DynamicRegistration.isKnown(clientURI: uri, accessToken: token, transport: transport, timeout: timeout) == false
    }

    private func discoverAndRegister(_ identifier: URL, id: String, saved: [String: Any]?) async throws -> ProviderConfiguration {
        let metadata = try await ResourceDiscovery.metadata(for: identifier, transport: transport, timeout: timeout)
        let server = metadata.authorizationServers[0]
        let (issuer, issuerURL, document) = try await ProviderDiscovery.metadata(
            issuer: server.absoluteString, transport: transport, timeout: timeout)
        var object = try ProviderDiscovery.providerFile(
            issuer: issuer, host: issuerURL.host ?? "", port: issuerURL.port, path: issuerURL.path, document: document)
        object["id"] = id
        object["display_name"] = metadata.name ?? ((identifier.host ?? "") + identifier.path)
        object["resource"] = identifier.absoluteString
        object["redirect_uri"] = redirectURI.absoluteString
        var scopes = metadata.scopes
        // A refresh token, where the server hands them out for asking: `latchkey token` then works for weeks, not an hour.
        if scopes.contains("openid"), (document["scopes_supported"] as? [String])?.contains("offline_access") == true,
            !scopes.contains("offline_access")
        {
            scopes.append("offline_access")
        }
        object["scopes"] = scopes
        // What the person chose in the window (the user agent) stays.
        if let agent = saved?["user_agent"] { object["user_agent"] = agent }
        let place = catalog.userFile(for: id).path
        if let endpointText = document["registration_endpoint"] as? String {
            guard let endpoint = URL(string: endpointText), ResourceDiscovery.allowed(endpoint, beside: issuerURL) else {
                throw OAuthError.invalidConfiguration(
                    "the registration_endpoint of \(issuer) must be an https URL: \(endpointText)")
            }
            let registration = try await DynamicRegistration.register(
                at: endpoint, redirectURIs: [redirectURI], clientName: clientName, transport: transport, timeout: timeout)
            object["registration_hint"] = nil
            object["client_id"] = registration.clientID
            object["client_authentication"] = registration.authentication.rawValue
            object["registration_client_uri"] = registration.registrationClientURI?.absoluteString
            if let secret = registration.clientSecret { try await secrets.save(secret, for: id) }
            if let token = registration.registrationAccessToken {
                try await secrets.save(token, for: Self.registrationKey(id))
            }
            try write(object, id: id)
        } else {
            // Kept without a client id, so that one given by hand (or in the window's set-up) is all that is missing.
            object["registration_hint"] =
                "\(issuer) does not let apps register themselves: register Latchkey there as a native (public) client "
                + "with the redirect URI \(redirectURI.absoluteString), and put its client id in \(place)."
            try write(object, id: id)
            throw OAuthError.invalidConfiguration(
                "\(issuer), which signs in for \(identifier.absoluteString), does not let apps register themselves (it has no registration_endpoint). "
                    + "Register Latchkey there as a native (public) client with the redirect URI \(redirectURI.absoluteString), "
                    + "and put {\"client_id\": \"…\"} in \(place).")
        }
        return try await configured(id)
    }

    private func write(_ object: [String: Any], id: String) throws {
        do {
            try PrivateFile.prepareDirectory(catalog.userConfigDirectory)
            try PrivateFile.replace(
                catalog.userFile(for: id), with: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]))
        } catch let error as PrivateFileError {
            throw OAuthError.invalidConfiguration("Latchkey \(error.sentence("could not write"))")
        }
    }

    /// The saved provider, its secret (if the server made it confidential) from the store.
    private func configured(_ id: String) async throws -> ProviderConfiguration {
        var configuration = try catalog.draft(named: id)
        if configuration.lacksClientSecret { configuration.clientSecret = try await secrets.load(for: id) }
        return try catalog.validated(configuration)
    }
}
