import FoundationEssentials

extension ProviderCatalog {
    /// Adds a provider of the person's own from the bytes of a provider file:
    /// written as `<config>/<id>.json`, 0600, without its `client_secret`,
    /// which is returned for the caller to keep in a `ClientSecretStore`.
    /// Refuses a file that is not of the provider shape, and an id already taken (here, or by the
    /// program: `reservedIDs`).
    public func addProvider(from data: Data, name: String, reservedIDs: Set<String> = []) throws -> (id: String, clientSecret: String?) {
        var file = try ProviderFile(data: data, file: URL(fileURLWithPath: name))
        if file.id.value == nil, let names = Self.issuerNames(file) { file.id = .value(names.id) }
        guard let id = file.id.value, Self.isPlainName(id), !id.hasPrefix("_") else {
            throw OAuthError.invalidConfiguration("\(name) has no usable \"id\" (letters, digits, - and _, not first).")
        }
        // Ids that differ only in case or in - and _ share their credential variables
        // (LATCHKEY_GITHUB_…): a file called "GitHub" would be handed GitHub's secret.
        let key = Self.credentialKey(id)
        let taken = availableProviders + reservedIDs.map { ($0, $0) }
        if let clash = taken.first(where: { Self.credentialKey($0.id) == key })
            ?? (FileManager.default.fileExists(atPath: userFile(for: id).path) ? (id, id) : nil)
        {
            throw OAuthError.invalidConfiguration("there is a provider called “\(clash.id)” already.")
        }
        // Compared as shown: a zero-width character or a bidi override does not make a name another.
        if let name = file.displayName.value.map(Redaction.printable),
            let clash = taken.first(where: { $0.displayName.lowercased() == name.lowercased() })
        {
            throw OAuthError.invalidConfiguration(
                "there is a provider shown as “\(clash.displayName)” already; give this one another display_name.")
        }
        let secret = file.clientSecret.value.flatMap { $0.isEmpty ? nil : $0 }
        file.clientSecret = .unset
        if secret != nil, file.clientAuthentication.value == ProviderConfiguration.ClientAuthentication.none {
            throw OAuthError.invalidConfiguration(
                "\(name) gives a client_secret, but its client_authentication is \"none\": a public client has no secret. Remove one of the two."
            )
        }
        // Checked as it will be read back, against the same rules, with stand-ins for the
        // credentials the set-up dialog gives later: a provider that could never be used is not written.
        var check = try withDiscoveredEndpoints(file).resolvingEndpoints()
        if (check.clientID.value ?? "").isEmpty { check.clientID = .value("to-be-set-up") }
        // The secret the file gave (kept elsewhere) still decides how the client authenticates.
        if secret != nil { check.clientSecret = .value("to-be-set-up") }
        var configuration = try ProviderConfiguration(file: check)
        // And one the provider needs (client authentication, or an OAuth 1.0a signature) is given later.
        if configuration.lacksClientSecret { configuration.clientSecret = "to-be-set-up" }
        try configuration.validate()
        try writeUserFile(file, for: id)
        return (id, secret)
    }

    /// `addProvider(from:name:)` with the bytes of `file` (see `read`).
    public func addProvider(file: URL, reservedIDs: Set<String> = []) throws -> (id: String, clientSecret: String?) {
        try addProvider(from: Self.read(file), name: file.path, reservedIDs: reservedIDs)
    }
}
