import FoundationEssentials

/// The zero-configuration service: a provider for a protected resource, made
/// from nothing but its URL. The resource names its authorization server (RFC
/// 9728), the server describes itself (RFC 8414 / OpenID Connect Discovery), and
/// lets Latchkey register
/// (RFC 7591). The result is an ordinary provider file in the person's config
/// directory — `resource`, the endpoints, the client id it was given — so the
/// next run needs no network until it signs in, and the window lists it.
///
/// The registration access token (RFC 7592), when the server gives one, goes to
/// the client-secret store, never into the file.
public struct ZeroConfiguration: Sendable {
    public let catalog: ProviderCatalog
    public let secrets: any ClientSecretStore
    /// The transport, how long a whole request may take, and the logger.
    public let network: Network
    public var transport: any HTTPTransport { network.transport }
    public var timeout: Double { network.timeout }
    /// What the person sees on the provider's consent page.
    public let clientName: String
    /// Registered for both user agents: the window intercepts it, and the browser's
    /// listener answers on it with any port (RFC 8252 §7.3).
    public let redirectURI: URL
    /// The https URL of a client metadata document that describes this app
    /// (draft-ietf-oauth-client-id-metadata-document): used as the client id, with no
    /// registration, at servers that say `client_id_metadata_document_supported`.
    public let clientIDMetadataDocument: URL?
    /// Where sign-ins are kept: what a provider removed by hand left there under an id is
    /// cleared before a new provider takes that id, so it never reaches the new one's endpoints.
    public let tokens: (any TokenStore)?
    /// Ids the program owns besides the catalog's (a provider file given on its command line,
    /// a provider it serves itself): never taken, never cleared.
    public let reservedIDs: Set<String>

    public init(
        catalog: ProviderCatalog, secrets: any ClientSecretStore, network: Network = Network(), clientName: String,
        redirectURI: URL = URL(string: "http://127.0.0.1/callback")!,
        clientIDMetadataDocument: URL? = nil, tokens: (any TokenStore)? = nil, reservedIDs: Set<String> = []
    ) {
        self.catalog = catalog
        self.secrets = secrets
        self.network = network
        self.clientName = clientName
        self.redirectURI = redirectURI
        self.clientIDMetadataDocument = clientIDMetadataDocument
        self.tokens = tokens
        self.reservedIDs = reservedIDs
    }

    /// The client id to use at a server whose metadata is `document`, when it takes
    /// client metadata documents and one is configured: the document's URL, which must be
    /// https with a path (plain http only on this computer), without a fragment.
    func metadataDocumentClientID(for document: JSONValue) throws -> String? {
        guard let url = clientIDMetadataDocument, document["client_id_metadata_document_supported"]?.bool == true
        else { return nil }
        guard ProviderConfiguration.isSecureOrLoopback(url), url.host?.isEmpty == false, url.path.count > 1, url.fragment == nil
        else {
            throw OAuthError.invalidConfiguration(
                "the client metadata document's URL must be https:// with a path (http only on this computer): \(url.absoluteString)")
        }
        return url.absoluteString
    }

    /// `file` made to sign in as the client its metadata document describes: a public client, nothing to register.
    static func useMetadataDocument(_ clientID: String, in file: inout ProviderFile) {
        file.clientID = .value(clientID)
        file.clientAuthentication = .value(.none)
        file.forgetRegistration()
        file.registrationHint = .unset
    }

    /// The URL a provider file was made for: `resource_url`, where the token's audience is another
    /// (the origin or a path above), else its `resource`.
    static func resourceURL(in file: ProviderFile) -> String? {
        file.resourceURL.value ?? file.resource.value
    }

    /// The provider id for a resource: its host, port and path (`127-0-0-1-8080-api-me`).
    public static func id(for resource: URL) throws -> String {
        ProviderDiscovery.names(of: try ResourceDiscovery.identifier(of: resource)).id
    }

    /// Where the registration access token of provider `id` is kept in the secret store,
    /// beside client secrets (keyed by id): no provider id added begins with `_`.
    public static func registrationKey(_ id: String) -> String { "_registration-" + id }

    /// What `configuration(for:)` did, besides the configuration.
    public struct Outcome: Sendable {
        public let configuration: ProviderConfiguration
        /// Whether Latchkey registered itself just now (first use, or the server forgot it).
        public let registered: Bool
    }

    /// The configuration that signs in for `resource`: the saved one, else discovered
    /// and registered anew. With `checkRegistration`, a saved registration is read
    /// back first (RFC 7592), and made anew if the server forgot it: worth a request
    /// before a sign-in, not before every use of a token that is already there.
    /// `forBrowser`: the sign-in is through the browser, which needs the port registered for
    /// it (`browser_redirect_uri`); a registration without one, or whose port another program
    /// has taken, is made anew.
    public func configuration(for resource: URL, checkRegistration: Bool = true, forBrowser: Bool = false) async throws -> Outcome {
        let identifier = try ResourceDiscovery.identifier(of: resource)
        let id = try Self.id(for: identifier)
        let saved = try claim(id, for: identifier.absoluteString) { Self.resourceURL(in: $0) == identifier.absoluteString }
        if let saved, !(saved.clientID.value ?? "").isEmpty {
            guard checkRegistration, let reason = await registerAgain(saved, id: id, forBrowser: forBrowser) else {
                return Outcome(configuration: try await catalog.configuration(named: id, secrets: secrets), registered: false)
            }
            if reason == .noBrowserPort {
                do {
                    let (configuration, registered) = try await discoverAndRegister(identifier, id: id, saved: saved)
                    return Outcome(configuration: configuration, registered: registered)
                } catch {
                    return Outcome(configuration: try await catalog.configuration(named: id, secrets: secrets), registered: false)
                }
            }
        }
        let (configuration, registered) = try await discoverAndRegister(identifier, id: id, saved: saved)
        return Outcome(configuration: configuration, registered: registered)
    }

    /// The id of the provider already made for `resource` (with a client id), found without a
    /// request; nil when there is none yet. For a caller that must not reach out before the person
    /// has said yes (an agent asked by another program).
    public func savedProvider(for resource: URL) throws -> String? {
        try Self.savedProvider(for: resource, in: catalog)
    }

    /// `savedProvider(for:)`, read from `catalog`'s files alone.
    public static func savedProvider(for resource: URL, in catalog: ProviderCatalog) throws -> String? {
        let identifier = try ResourceDiscovery.identifier(of: resource)
        let id = try Self.id(for: identifier)
        guard let saved = try? ProviderCatalog.readFile(catalog.userFile(for: id)),
            Self.resourceURL(in: saved) == identifier.absoluteString, !(saved.clientID.value ?? "").isEmpty
        else { return nil }
        return id
    }

    /// `configuration(for:)` for a caller that then shows the provider by its id (`latchkey
    /// --resource`, the add dialog): a failure that still left a provider for this very resource
    /// (a server that lets no app register) is returned as `problem`, for the person to read
    /// beside Set up…; any other failure throws.
    public func prepare(resource: URL) async throws -> (id: String, problem: (any Error)?) {
        let identifier = try ResourceDiscovery.identifier(of: resource)
        let id = try Self.id(for: identifier)
        do {
            _ = try await configuration(for: identifier)
            return (id, nil)
        } catch {
            let kept = try? ProviderCatalog.readFile(catalog.userFile(for: id))
            guard kept.flatMap(Self.resourceURL(in:)) == identifier.absoluteString else { throw error }
            return (id, error)
        }
    }

    /// The person's file for provider `id`, made for `what` (a resource or an issuer), if there is
    /// one; nil if none. Throws, before anything is touched, when any other provider owns `id`:
    /// a preset, an id the program reserves, a file there that is not `isOurs`, or a provider
    /// whose credential variables `id` would share. Only an id nobody owns is later cleared of
    /// what a provider removed by hand left behind (`clearLeftBehind`), once its server has answered.
    func claim(_ id: String, for what: String, isOurs: (ProviderFile) -> Bool) throws -> ProviderFile? {
        if reservedIDs.contains(id) || catalog.presetFile(named: id) != nil {
            throw OAuthError.invalidConfiguration("\(what) would be called “\(id)”, the name of a provider \(clientName) comes with.")
        }
        let file = catalog.userFile(for: id)
        guard FileManager.default.fileExists(atPath: file.path) else {
            // A new id only: one already made here goes on being used (it takes nothing from the environment).
            let key = ProviderCatalog.credentialKey(id)
            if let clash = (catalog.availableProviders.map(\.id) + reservedIDs).first(where: {
                $0 != id && ProviderCatalog.credentialKey($0) == key
            }) {
                throw OAuthError.invalidConfiguration(
                    "\(what) would be called “\(id)”, too like the provider “\(clash)” (they would share its credential variables).")
            }
            return nil
        }
        let own = try ProviderCatalog.readFile(file)
        guard isOurs(own) else {
            throw OAuthError.invalidConfiguration("\(file.path) describes another provider than \(what); move it away to sign in there.")
        }
        return own
    }

    /// What a provider removed by hand left under `id` (its sign-in, secret and registration):
    /// cleared before a new provider takes the id, once `claim` found nobody owns it and its
    /// server has answered, so that nothing of it reaches the new provider's endpoints.
    public func clearLeftBehind(_ id: String) async {
        try? await tokens?.remove(for: id)
        try? await secrets.remove(for: id)
        try? await secrets.remove(for: Self.registrationKey(id))
        try? await secrets.remove(for: ProviderCatalog.clientKeyName(id))
    }

    /// Why the client Latchkey registered for `saved` is to be registered anew, if it is.
    enum RegisterAgain {
        /// The server no longer knows it (see `isForgotten`).
        case forgotten
        /// Another program has the port registered for the browser's way back.
        case portTaken
        /// Registered before Latchkey registered a port for the browser: worth a try, and if
        /// the new registration cannot be had, the old one still serves servers that take any port.
        case noBrowserPort
    }

    /// Whether (and why) the client Latchkey registered for `saved` is to be registered anew;
    /// `forBrowser`: the sign-in to come is through the browser. Nil for a client Latchkey did not
    /// register. Nothing kept is touched here: a new registration replaces the old one's secrets
    /// only once it has been made (see `register`), so one that fails loses nothing.
    func registerAgain(_ saved: ProviderFile, id: String, forBrowser: Bool) async -> RegisterAgain? {
        guard saved.registrationEndpoint.value != nil else { return nil }
        if forBrowser {
            guard let port = saved.browserRedirectURI.value.flatMap(URL.init(string:))?.port else { return .noBrowserPort }
            if !LoopbackPort.isFree(port) { return .portTaken }
        }
        guard saved.registrationClientURI.value != nil, await isForgotten(saved, id: id) else { return nil }
        return .forgotten
    }

    /// True only when the server says it no longer knows the client (RFC 7592 §2.1).
    /// A server that replaced the registration access token or the client secret
    /// in its answer (§3) has the new ones kept.
    private func isForgotten(_ saved: ProviderFile, id: String) async -> Bool {
        guard let text = saved.registrationClientURI.value, let uri = URL(string: text),
            let endpointText = saved.registrationEndpoint.value, let endpoint = URL(string: endpointText),
            DynamicRegistration.isSameOrigin(uri, as: endpoint),
            let token = try? await secrets.load(for: Self.registrationKey(id))
        else { return false }
        switch await DynamicRegistration.readBack(clientURI: uri, accessToken: token, network: network) {
        case .forgotten: return true
        case .unclear: return false
        case .known(let newToken, let newSecret):
            if let newToken { _ = try? await secrets.save(newToken, for: Self.registrationKey(id)) }
            if let newSecret, saved.clientAuthentication.value != ProviderConfiguration.ClientAuthentication.none {
                _ = try? await secrets.save(newSecret, for: id)
            }
            return false
        }
    }

    /// The provider for `identifier`, discovered and written now; whether Latchkey registered for it
    /// (not when a client metadata document stands in for a registration).
    /// `known`: the resource's metadata, when the caller has just read it.
    func discoverAndRegister(_ identifier: URL, id: String, saved: ProviderFile?, known: ProtectedResourceMetadata? = nil)
        async throws -> (ProviderConfiguration, registered: Bool)
    {
        let metadata: ProtectedResourceMetadata
        if let known {
            metadata = known
        } else {
            metadata = try await ResourceDiscovery.metadata(for: identifier, network: network)
        }
        let (issuer, issuerURL, document) = try await serverMetadata(for: metadata, asked: identifier)
        var file = try ProviderDiscovery.providerFile(issuer: issuer, document: document, programName: clientName)
        if saved == nil { await clearLeftBehind(id) }
        file.id = .value(id)
        // The resource's own name comes with where it is, so a resource cannot pass itself off as another.
        let place = (identifier.host ?? "") + (identifier.port.map { ":\($0)" } ?? "")
        file.displayName = .value(metadata.name.map { "\(Redaction.clip(String($0.prefix(60)))) (\(place))" } ?? place + identifier.path)
        // The token's audience (RFC 8707) is what the metadata says the resource is: the URL asked
        // about, or the origin or a path above it; the URL asked about names the file.
        file.resource = .value(metadata.resource.absoluteString)
        if metadata.resource != identifier { file.resourceURL = .value(identifier.absoluteString) }
        file.origin = .value("resource")
        file.redirectURI = .value(redirectURI.absoluteString)
        var scopes = metadata.scopes
        // A refresh token, where the server lists offline_access (never assumed, never asked of one that
        // does not): `latchkey token` then works for weeks, not an hour. No scope at all stays none.
        if !scopes.isEmpty, document["scopes_supported"]?.strings?.contains("offline_access") == true,
            !scopes.contains("offline_access")
        {
            scopes.append("offline_access")
        }
        file.scopes = .value(scopes)
        throughIdentityProvider(&file, document: document, id: id)
        // What the person chose in the window (the user agent) stays.
        if let agent = saved?.userAgent, agent != .unset { file.userAgent = agent }
        let path = catalog.userFile(for: id).path
        var registered = false
        if let clientID = try metadataDocumentClientID(for: document) {
            Self.useMetadataDocument(clientID, in: &file)
            try catalog.writeUserFile(file, for: id)
        } else if let endpointText = document["registration_endpoint"]?.string {
            try await register(into: &file, endpointText: endpointText, issuer: issuer, issuerURL: issuerURL, id: id)
            try catalog.writeUserFile(file, for: id)
            registered = true
        } else {
            // Kept without a client id, so that one given by hand (or in the window's set-up) is all that is missing.
            file.registrationHint = .value(
                "\(issuer) does not let apps register themselves: register \(clientName) there as a native (public) client "
                    + "with the redirect URI \(redirectURI.absoluteString), and put its client id in \(path).")
            try catalog.writeUserFile(file, for: id)
            throw OAuthError.invalidConfiguration(
                "\(issuer), which signs in for \(identifier.absoluteString), does not let apps register themselves (it has no registration_endpoint). "
                    + "Register \(clientName) there as a native (public) client with the redirect URI \(redirectURI.absoluteString), "
                    + "and put {\"client_id\": \"…\"} in \(path).")
        }
        return (try await catalog.configuration(named: id, secrets: secrets), registered)
    }

    /// The metadata of the resource's authorization server, once it is seen to serve the resource
    /// and to take PKCE with S256.
    private func serverMetadata(for metadata: ProtectedResourceMetadata, asked identifier: URL) async throws
        -> (issuer: String, url: URL, document: JSONValue)
    {
        let server = metadata.authorizationServers[0]
        let (issuer, issuerURL, document) = try await ProviderDiscovery.metadata(
            issuer: server.absoluteString, network: network)
        // RFC 9728 §4: a server that lists the resources it serves must list this one.
        if let served = document["protected_resources"]?.strings,
            !served.contains(where: { (URL(string: $0).flatMap { try? ResourceDiscovery.identifier(of: $0) }) == metadata.resource })
        {
            throw OAuthError.invalidConfiguration(
                "\(identifier.absoluteString) names \(issuer) as its authorization server, but \(issuer) does not list it among its protected resources (RFC 9728 §4)."
            )
        }
        // PKCE is checked before anything is asked of the person (MCP 2026-07-28, Security
        // Considerations): a server that does not say it takes S256 is not signed in with.
        guard document["code_challenge_methods_supported"]?.strings?.contains("S256") == true else {
            throw OAuthError.invalidConfiguration(
                "\(issuer), which signs in for \(identifier.absoluteString), does not say it supports PKCE with S256 "
                    + "(code_challenge_methods_supported), which a sign-in for a protected resource requires.")
        }
        return (issuer, issuerURL, document)
    }

    /// Registers Latchkey at the server's `registration_endpoint` (RFC 7591) and writes what it
    /// was given into `object`: the client id and how it authenticates, where to read the
    /// registration back; its secret and registration access token go to `secrets`.
    func register(into file: inout ProviderFile, endpointText: String, issuer: String, issuerURL: URL, id: String)
        async throws
    {
        guard let endpoint = URL(string: endpointText), ResourceDiscovery.allowed(endpoint, beside: issuerURL) else {
            throw OAuthError.invalidConfiguration(
                "the registration_endpoint of \(issuer) must be an https URL: \(Redaction.clip(endpointText))")
        }
        // The window's redirect URI (it never loads: the view stops it), and the browser's at a port
        // chosen now: a server that compares redirect URIs exactly accepts both as registered.
        var redirectURIs = [redirectURI]
        file.browserRedirectURI = .unset
        if ProviderConfiguration.browserCanReturn(to: redirectURI), redirectURI.port == nil,
            let browser = LoopbackPort.unused().flatMap({ LoopbackPort.redirectURI(redirectURI, at: $0) })
        {
            redirectURIs.append(browser)
            file.browserRedirectURI = .value(browser.absoluteString)
        }
        let registration = try await DynamicRegistration.register(
            at: endpoint, redirectURIs: redirectURIs, clientName: clientName, network: network)
        file.registrationHint = .unset
        file.clientID = .value(registration.clientID)
        file.clientAuthentication = .value(registration.authentication)
        file.registrationClientURI = registration.registrationClientURI.map { .value($0.absoluteString) } ?? .unset
        file.registrationEndpoint = .value(endpoint.absoluteString)
        // The new registration's secrets replace whatever an earlier one left, now that it exists.
        if let secret = registration.clientSecret {
            try await secrets.save(secret, for: id)
        } else {
            try? await secrets.remove(for: id)
        }
        if let token = registration.registrationAccessToken {
            try await secrets.save(token, for: Self.registrationKey(id))
        } else {
            try? await secrets.remove(for: Self.registrationKey(id))
        }
    }

    /// Before a sign-in with provider `id`: when Latchkey registered it (for a resource or an
    /// issuer), its registration is read back (RFC 7592), and if the server forgot it, Latchkey
    /// registers again. Returns the provider's configuration as kept after that (a new client, or
    /// the same with a secret the server rotated); nil for a provider Latchkey did not register.
    /// `forBrowser`: the sign-in is through the browser (see `configuration(for:checkRegistration:forBrowser:)`).
    public func checkedRegistration(of id: String, forBrowser: Bool = false) async throws -> ProviderConfiguration? {
        guard ProviderCatalog.isPlainName(id), let own = try? ProviderCatalog.readFile(catalog.userFile(for: id)),
            own.registrationEndpoint.value != nil
        else { return nil }
        if let text = Self.resourceURL(in: own), let resource = URL(string: text) {
            return try await configuration(for: resource, checkRegistration: true, forBrowser: forBrowser).configuration
        }
        if let issuer = own.issuer.value, ProviderCatalog.needsDiscovery(own) {
            _ = try await prepare(issuer: issuer, checkRegistration: true, forBrowser: forBrowser)
            return try await catalog.configuration(named: id, secrets: secrets, network: network)
        }
        return nil
    }
}
