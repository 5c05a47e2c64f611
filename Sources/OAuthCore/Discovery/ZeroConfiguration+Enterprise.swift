import FoundationEssentials

extension ZeroConfiguration {
    /// Enterprise-Managed Authorization: a server that takes ID-JAGs is reached through the
    /// organisation's identity provider, where there is one, with no sign-in of its own (its own
    /// stays, for when the identity provider refuses).
    func throughIdentityProvider(_ file: inout ProviderFile, document: JSONValue, id: String) {
        guard Self.takesIDJAGs(document), let idp = catalog.enterpriseIdentityProvider, idp != id else { return }
        file.grant = .value(.idJAG)
        file.identityProvider = .value(idp)
    }

    /// Whether an authorization server takes ID-JAGs: it says so in `authorization_grant_profiles_supported`
    /// (id-jag-04 §7.2), or, as the MCP conformance suite's server does, lists the JWT bearer grant.
    static func takesIDJAGs(_ document: JSONValue) -> Bool {
        document["authorization_grant_profiles_supported"]?.strings?.contains("urn:ietf:params:oauth:grant-profile:id-jag") == true
            || document["grant_types_supported"]?.strings?.contains(TokenClient.jwtBearer) == true
    }
}
