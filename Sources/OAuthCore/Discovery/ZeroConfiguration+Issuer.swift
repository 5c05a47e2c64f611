import FoundationEssentials

extension ZeroConfiguration {
    /// The provider id for an issuer: its host, port and path (`id-example-com-realms-staff`).
    public static func id(forIssuer text: String) throws -> String {
        ProviderDiscovery.names(of: try ProviderDiscovery.issuerURL(text).url).id
    }

    /// The provider for an authorization server named by its issuer (`latchkey --issuer`):
    /// a file of the person's that names the issuer and no endpoints, which come from the
    /// discovery document (kept in the catalog's cache, see `ProviderCatalog`), so they follow
    /// the provider. When no client id is configured and the server offers registration,
    /// Latchkey registers (and, with `checkRegistration`, registers again if the server
    /// forgot it). Without either, the provider is left lacking only its client id, whose
    /// `registration_hint` says where to get one. Returns its id and whether it registered now.
    public func prepare(issuer text: String, checkRegistration: Bool = true, forBrowser: Bool = false) async throws
        -> (id: String, registered: Bool)
    {
        let (typed, issuerURL) = try ProviderDiscovery.issuerURL(text)
        let id = try Self.id(forIssuer: typed)
        let saved = try claim(id, for: typed) {
            $0.issuer.value.map(Issuer.normalised) == Issuer.normalised(typed) && $0.resource.value == nil
        }
        guard let discovery = catalog.discovery else {
            throw OAuthError.invalidConfiguration(
                "this program keeps no discovery documents, so it cannot use \(typed) by its issuer alone.")
        }
        // The issuer exactly as the server names itself: as kept, or (typed now) as typed, unless the
        // metadata names it with a trailing slash more or less. Checked exactly all the same.
        var issuer = saved?.issuer.value ?? typed
        let document: JSONValue
        do {
            document = try await discovery.document(issuer: issuer, network: network).document
        } catch OAuthError.issuerSpelledOtherwise(_, let named) where saved == nil {
            issuer = named
            document = try await discovery.document(issuer: issuer, network: network).document
        }
        // Marked as made for an issuer only when made here: a file of the person's own stays theirs.
        var file = saved ?? ProviderFile.madeFor(issuer: issuer)
        if saved == nil {
            await clearLeftBehind(id)
            try catalog.writeUserFile(file, for: id)
        }
        // A client id the file gives is the one to use, unless Latchkey registered it and the server forgot it since.
        var reason: RegisterAgain?
        if !(try catalog.draft(named: id).clientID.isEmpty) {
            reason = checkRegistration ? await registerAgain(file, id: id, forBrowser: forBrowser) : nil
            guard reason != nil else { return (id, false) }
            file.clientID = .unset
            file.forgetRegistration()
        }
        var registered = false
        if let clientID = try metadataDocumentClientID(for: document) {
            Self.useMetadataDocument(clientID, in: &file)
        } else if let endpointText = document["registration_endpoint"]?.string {
            do {
                try await register(into: &file, endpointText: endpointText, issuer: issuer, issuerURL: issuerURL, id: id)
            } catch  where reason == .noBrowserPort {
                // A registration from before browser ports still serves servers that take any port.
                return (id, false)
            }
            registered = true
        } else if reason == .noBrowserPort {
            return (id, false)
        }
        // Written even with no client to be had: a forgotten one must not stay.
        try catalog.writeUserFile(file, for: id)
        return (id, registered)
    }
}
