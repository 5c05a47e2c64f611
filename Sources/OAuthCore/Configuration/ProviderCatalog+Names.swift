import FoundationEssentials

/// The names providers show, from their files alone: the list of providers, and one provider's before it is ready.
extension ProviderCatalog {
    /// Every provider a person can choose: the presets and the providers of their
    /// own config directory, each with the name it shows, sorted by that name.
    /// Read without validation, so a provider that still lacks its client id is listed too.
    public var availableProviders: [(id: String, displayName: String)] {
        let own = ((try? FileManager.default.contentsOfDirectory(atPath: userConfigDirectory.path)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter(Self.isPlainName)
        return Set(presetNames + own).map { id in
            let files = [presetFile(named: id).flatMap { try? Self.readFile($0) }, personsOwnFile(for: id)].compactMap { $0 }
            return (id, Self.shownName(files, id: id))
        }.sorted { ($0.displayName.lowercased(), $0.id) < ($1.displayName.lowercased(), $1.id) }
    }

    /// Provider `name`'s name as the person knows it, from its files alone (no discovery document is
    /// fetched, none is needed, and nothing is checked): what the list of providers shows for it, an
    /// unreadable file of the person's own left out as the list leaves it out. Throws when there is no
    /// such provider.
    public func displayName(named name: String) throws -> String {
        Self.shownName([try base(named: name), personsOwnFile(for: name)].compactMap { $0 }, id: name)
    }

    /// The name a provider file given by path shows (`--provider-file`): from the file, under the
    /// person's own file for its id, as the provider itself is read.
    public func displayName(file: URL) throws -> String {
        let (layered, id) = try layered(file: file)
        return Self.shownName([layered], id: id)
    }

    /// The person's own file for provider `id`, when there is one and it can be read (an unreadable one
    /// names nothing).
    private func personsOwnFile(for id: String) -> ProviderFile? {
        try? Self.readFile(userFile(for: id))
    }

    /// The name shown for a provider with these files, the person's own last: the last one naming it,
    /// else the place of the issuer a file names (as its discovered layer would), else its id.
    private static func shownName(_ layers: [ProviderFile], id: String) -> String {
        let name = layers.compactMap(\.displayName.value).last ?? layers.last.flatMap(issuerNames)?.place
        return Redaction.printable(name ?? id)
    }
}
