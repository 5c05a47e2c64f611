import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Finds provider presets and layers a person's own settings over them.
///
/// Layers, later ones winning: the preset file (or a file given by path), the
/// user's `<config>/<id>.json`, the environment's `<PREFIX>_<ID>_CLIENT_ID` and
/// `<PREFIX>_<ID>_CLIENT_SECRET` (when the program names a prefix), then the
/// caller's overrides. Endpoints written as paths are appended to `issuer`.
/// A provider whose layers name an `issuer` and neither endpoint takes the rest
/// from the issuer's discovery document, kept in `discovery` (see
/// `refreshDiscovery`): `{"issuer": …, "client_id": …}` is a whole provider file.
///
/// Which directories and which prefix are the program's choice: OAuthCore
/// names none of its own.
public struct ProviderCatalog: Sendable {
    public var presetDirectories: [URL]
    public var userConfigDirectory: URL
    public var environment: EnvironmentVariables
    /// The prefix of the credential variables (`LATCHKEY` reads `LATCHKEY_GITHUB_CLIENT_ID`);
    /// nil: credentials come from files only.
    public var credentialPrefix: String?
    /// Where discovery documents are kept for providers that name only their issuer;
    /// nil: such providers cannot be used.
    public var discovery: DiscoveryCache?
    /// The program's name, where a sentence tells the person what to register ("this app" when nil).
    public var programName: String?

    public init(
        presetDirectories: [URL], userConfigDirectory: URL, environment: EnvironmentVariables = [:],
        credentialPrefix: String? = nil, discovery: DiscoveryCache? = nil
    ) {
        self.presetDirectories = presetDirectories
        self.userConfigDirectory = userConfigDirectory
        self.environment = environment
        self.credentialPrefix = credentialPrefix
        self.discovery = discovery
    }

    /// The environment variable that holds `suffix` (CLIENT_ID, CLIENT_SECRET) for provider `id`.
    public func credentialVariable(for id: String, _ suffix: String) -> String? {
        guard let credentialPrefix else { return nil }
        return "\(credentialPrefix)_\(Self.credentialKey(id))_\(suffix)"
    }

    /// Names of the presets found, for `--help` and error messages.
    public var presetNames: [String] {
        var names = Set<String>()
        for directory in presetDirectories {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            names.formUnion(files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) })
        }
        return names.sorted()
    }

    /// The organisation's identity provider, where one is set up (a provider file says
    /// `"enterprise_idp": true`; of several, the first by id): MCP servers that take its ID-JAGs are
    /// reached through its sign-in.
    public var enterpriseIdentityProvider: String? {
        availableProviders.map(\.id).sorted().first { id in
            [presetFile(named: id), userFile(for: id)].compactMap { $0 }.compactMap { try? Self.readFile($0) }
                .compactMap(\.enterpriseIdentityProvider.value).last == true
        }
    }

    /// Changes the person's own file for provider `id` (made if there is none), keeping
    /// everything else in it as it was written; written whole, readable by the person only.
    public func updateUserFile(for id: String, _ change: (inout ProviderFile) throws -> Void) throws {
        guard Self.isPlainName(id) else { throw OAuthError.unknownProvider(id) }
        let file = userFile(for: id)
        var own = FileManager.default.fileExists(atPath: file.path) ? try Self.readFile(file) : ProviderFile()
        try change(&own)
        try writeUserFile(own, for: id)
    }

    /// Writes the person's whole file for provider `id`: 0600 in a 0700 directory, replaced atomically.
    func writeUserFile(_ file: ProviderFile, for id: String) throws {
        let data = file.data
        do {
            try PrivateFile.prepareDirectory(userConfigDirectory)
            try PrivateFile.replace(userFile(for: id), with: data)
        } catch {
            throw OAuthError.invalidConfiguration(error.sentence("could not write"))
        }
    }

    /// Provider `id` ready to use: its layers, the client secret `secrets` keeps when
    /// no layer gives one (typed into a set-up dialog, or given by a registration),
    /// then the checks. Asks `secrets`, which may be a keyring: not for a GUI thread.
    /// A provider that names only its issuer has its discovery document brought up to date first.
    public func configuration(
        named id: String, secrets: any ClientSecretStore, network: Network = Network()
    ) async throws -> ProviderConfiguration {
        try await refreshDiscovery(named: id, network: network)
        return try await completed(draft(named: id), secrets: secrets)
    }

    /// For a provider whose layers name its issuer and neither endpoint: its discovery
    /// document, fetched or confirmed if the kept copy is not fresh, or the kept copy
    /// when the server cannot be asked (see `DiscoveryCache.document`). Nil for every
    /// other provider, which needs no request. Throws a sentence when there is no copy
    /// and none can be had.
    @discardableResult
    public func refreshDiscovery(
        named name: String, network: Network = Network()
    ) async throws -> DiscoveryCache.Source? {
        try await refreshDiscovery(layers: layers(base: base(named: name), overrides: [:]), network: network)
    }

    /// `refreshDiscovery(named:)` for a provider described by `file`.
    @discardableResult
    public func refreshDiscovery(
        file: URL, network: Network = Network()
    ) async throws -> DiscoveryCache.Source? {
        try await refreshDiscovery(layers: layers(base: Self.readFile(file), overrides: [:]), network: network)
    }

    private func refreshDiscovery(layers file: ProviderFile, network: Network) async throws
        -> DiscoveryCache.Source?
    {
        guard Self.needsDiscovery(file), let issuer = file.issuer.value else { return nil }
        guard let discovery else { throw Self.noDiscovery(issuer) }
        do {
            return try await discovery.document(issuer: issuer, network: network).source
        } catch OAuthError.issuerSpelledOtherwise(let asked, let named) {
            // Written before issuers were compared exactly, a file of Latchkey's may hold the issuer
            // without the trailing slash its server names itself with: kept as the server names it
            // from now on, then checked exactly like any other. A file of the person's own stays theirs.
            guard let id = file.id.value, var own = try? Self.readFile(userFile(for: id)),
                own.issuer.value == issuer, Self.isDiscovered(own)
            else { throw OAuthError.issuerSpelledOtherwise(asked: asked, named: named) }
            own.issuer = .value(named)
            try writeUserFile(own, for: id)
            return try await discovery.document(issuer: named, network: network).source
        }
    }

    /// A provider file that names its issuer and neither endpoint is completed from discovery.
    static func needsDiscovery(_ file: ProviderFile) -> Bool {
        file.issuer.value != nil && file.authorizationEndpoint.value == nil && file.tokenEndpoint.value == nil
    }

    private static func noDiscovery(_ issuer: String) -> OAuthError {
        .invalidConfiguration("the provider names only its issuer (\(issuer)), and this program keeps no discovery documents.")
    }

    /// `object` under what the issuer's kept discovery document says (its own keys win), read
    /// without a request; a sentence when no copy is kept yet.
    func withDiscoveredEndpoints(_ file: ProviderFile) throws -> ProviderFile {
        guard Self.needsDiscovery(file), let text = file.issuer.value else { return file }
        let (issuer, _) = try ProviderDiscovery.issuerURL(text)
        guard let discovery else { throw Self.noDiscovery(issuer) }
        guard let document = discovery.cachedDocument(issuer: issuer) else {
            throw OAuthError.invalidConfiguration(
                "\(issuer)'s discovery document, where this provider's endpoints are, has not been read yet. Check your connection and try again."
            )
        }
        let discovered = try ProviderDiscovery.providerFile(issuer: issuer, document: document, programName: programName ?? "this app")
        return file.over(discovered)
    }

    /// `draft` with the client secret `secrets` keeps for it when no layer gives one, then checked.
    public func completed(_ draft: ProviderConfiguration, secrets: any ClientSecretStore) async throws -> ProviderConfiguration {
        var configuration = draft
        // A client key Latchkey keeps, where the file names no key of its own.
        if configuration.clientAuthentication == .privateKeyJWT, (configuration.privateKeyFile ?? "").isEmpty {
            configuration.clientKey = try? await secrets.load(for: Self.clientKeyName(configuration.id))
        }
        if configuration.lacksClientSecret {
            do {
                configuration.clientSecret = try await secrets.load(for: configuration.id)
            } catch OAuthError.storage(let reason) {
                throw OAuthError.invalidConfiguration("the client secret of \(configuration.displayName) could not be read: \(reason)")
            }
        }
        return try validated(configuration)
    }

    /// Where the client key Latchkey keeps for provider `id` is, in the client secret store: beside client
    /// secrets (keyed by id), under a name no provider id has (none begins with `_`).
    public static func clientKeyName(_ id: String) -> String { "_client-key-" + id }

    public func presetFile(named name: String) -> URL? {
        guard Self.isPlainName(name) else { return nil }
        return presetDirectories.map { $0.appendingPathComponent("\(name).json") }
            .first { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The user's own file for a provider: credentials, or a whole provider of their own.
    public func userFile(for id: String) -> URL {
        userConfigDirectory.appendingPathComponent("\(id).json")
    }

    /// A preset by name (or a provider defined wholly in the user's config directory).
    public func configuration(named name: String, overrides: [String: String] = [:]) throws -> ProviderConfiguration {
        try validated(draft(named: name, overrides: overrides))
    }

    /// A provider described by a file of the preset shape.
    public func configuration(file: URL, overrides: [String: String] = [:]) throws -> ProviderConfiguration {
        try validated(draft(file: file, overrides: overrides))
    }

    /// A provider as its layers describe it, not yet checked: what a set-up
    /// dialog shows for one that still lacks its client id or secret. Throws
    /// only when the files cannot be read or do not have the provider's shape.
    public func draft(named name: String, overrides: [String: String] = [:]) throws -> ProviderConfiguration {
        try draft(base: base(named: name), overrides: overrides)
    }

    /// Whether there is a provider `name`: a preset, or a file of the person's own. Nothing is read.
    public func contains(_ name: String) -> Bool {
        Self.isPlainName(name) && (presetFile(named: name) != nil || FileManager.default.fileExists(atPath: userFile(for: name).path))
    }

    /// Provider `name`'s id after its layers are read: throws when there is no such
    /// provider or its files cannot be read, without needing its discovery document.
    public func readableID(named name: String) throws -> String {
        try layers(base: base(named: name), overrides: [:]).id.value ?? name
    }

    /// What a question about provider `name`'s tokens says of it, from its files alone (no discovery,
    /// no keyring): its name, whether it can narrow a token, and its scopes in words.
    public func questionWords(named name: String) throws -> QuestionWords {
        let file = try layers(base: base(named: name), overrides: [:])
        var words: [String: String] = [:]
        for entry in file.scopeDescriptions.value?.entries ?? [] { words[entry.key] = entry.value.value.map(Redaction.printable) }
        var stands: QuestionWords.StandIn?
        switch file.grant.value {
        case .clientCredentials?:
            // The client at its server: the same client id at another issuer is another client.
            let server = file.issuer.value ?? file.tokenEndpoint.value ?? ""
            stands = .client(Hex.sha256("client " + (file.clientID.value ?? name) + " at " + server))
        case .idJAG?: stands = file.identityProvider.value.map(QuestionWords.StandIn.identityProvider)
        default: stands = nil
        }
        return QuestionWords(
            displayName: Redaction.printable(file.displayName.value ?? name), narrows: (file.narrowing.value ?? .refresh) != .none,
            scopeWords: words,
            standIn: stands)
    }

    /// What a question about a provider's tokens says of it, and whose tokens they are where no person
    /// signs in to it.
    public struct QuestionWords: Sendable {
        public let displayName: String
        public let narrows: Bool
        public let scopeWords: [String: String]
        /// Whom a program's permission names where nobody signs in to this provider itself: the client
        /// (client credentials: the digest of its id), or the person signed in at the identity provider
        /// it is reached through (`id_jag`: that provider's id).
        public let standIn: StandIn?

        public enum StandIn: Sendable, Equatable {
            case client(String)
            case identityProvider(String)
        }
    }

    /// `readableID(named:)` for a provider described by `file`.
    public func readableID(file: URL) throws -> String {
        try layered(file: file).id
    }

    /// A provider file given by path under the person's own file for its id, and that id.
    func layered(file: URL) throws -> (ProviderFile, id: String) {
        let layered = try layers(base: Self.readFile(file), overrides: [:])
        guard let id = layered.id.value else { throw OAuthError.invalidConfiguration("\(file.path) has no usable \"id\".") }
        return (layered, id)
    }

    /// The first layer of provider `name`: its preset, or just its id for one of the person's own.
    func base(named name: String) throws -> ProviderFile {
        guard contains(name) else { throw OAuthError.unknownProvider(name) }
        if let preset = presetFile(named: name) { return try Self.readFile(preset) }
        var own = ProviderFile()
        own.id = .value(name)
        return own
    }

    public func draft(file: URL, overrides: [String: String] = [:]) throws -> ProviderConfiguration {
        try draft(base: Self.readFile(file), overrides: overrides)
    }

    /// `configuration` checked against the security rules, its errors naming
    /// where this catalog reads a missing credential.
    public func validated(_ configuration: ProviderConfiguration) throws -> ProviderConfiguration {
        try configuration.validate(place: { credential in place(of: credential, for: configuration.id) })
        return configuration
    }

    package func draft(base: ProviderFile, overrides: [String: String]) throws -> ProviderConfiguration {
        var file = try withDiscoveredEndpoints(layers(base: base, overrides: overrides)).resolvingEndpoints()
        if file.clientID.value == nil { file.clientID = .value("") }
        return try ProviderConfiguration(file: file)
    }

    /// The provider's layers merged, before discovery and checks.
    func layers(base: ProviderFile, overrides: [String: String]) throws -> ProviderFile {
        guard let id = (overrides[ProviderFile.key(of: \.id)] ?? base.id.value ?? Self.issuerNames(base)?.id), Self.isPlainName(id) else {
            throw OAuthError.invalidConfiguration("the provider file has no usable \"id\" (letters, digits, - and _).")
        }
        var file = base
        let user = userFile(for: id)
        if FileManager.default.fileExists(atPath: user.path) { file = try Self.readFile(user).over(file) }
        // A provider made from what a server said of itself takes nothing from the environment: its
        // id came from that server, and a variable meant for a provider of the person's could match it.
        if !Self.isDiscovered(file) {
            if let variable = credentialVariable(for: id, "CLIENT_ID"), let clientID = environment[variable], !clientID.isEmpty {
                file.clientID = .value(clientID)
            }
            if let variable = credentialVariable(for: id, "CLIENT_SECRET"), let secret = environment[variable], !secret.isEmpty {
                file.clientSecret = .value(secret)
            }
        }
        file = try ProviderFile(.object(overrides.sorted { $0.key < $1.key }.map { .init($0.key, .string($0.value)) })).over(file)
        file.id = .value(id)
        return file
    }

    /// Whether a provider's layers were written by `ZeroConfiguration` for a resource or an issuer
    /// (marked with `origin`, or, written before that mark, holding a registration), whose id a
    /// server's URL chose.
    static func isDiscovered(_ file: ProviderFile) -> Bool {
        file.origin.value != nil || file.registrationClientURI.value != nil
    }

    /// The id and name of a file that names only its issuer, where it gives none: the
    /// issuer's, as its discovered layer has them (see `ProviderDiscovery.names`).
    static func issuerNames(_ file: ProviderFile) -> (id: String, place: String)? {
        guard needsDiscovery(file), let text = file.issuer.value, let (_, url) = try? ProviderDiscovery.issuerURL(text)
        else { return nil }
        return ProviderDiscovery.names(of: url)
    }

    /// Where this catalog reads `credential` for provider `id`, in words.
    func place(of credential: String, for id: String) -> String {
        let file = userFile(for: id).path
        // A provider made from a server's URL takes nothing from the environment (see `layers`).
        if let own = try? Self.readFile(userFile(for: id)), Self.isDiscovered(own) { return file }
        return credentialVariable(for: id, credential).map { "\(file) or set \($0)" } ?? file
    }

    /// A provider file (see `read`).
    public static func readFile(_ file: URL) throws -> ProviderFile {
        try ProviderFile(data: read(file), file: file)
    }

    /// A provider file's bytes: a regular file of at most 1 MB. A pipe or a
    /// device named by mistake (`--provider-file`, the add-provider dialog)
    /// is refused at once instead of holding the caller.
    static func read(_ file: URL) throws -> Data {
        let failure = OAuthError.invalidConfiguration("cannot read \(file.path) as a provider file.")
        let fd = open(file.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw failure }
        defer { close(fd) }
        var info = stat()
        let limit = 1_000_000
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= limit else { throw failure }
        // As large as the file says, and one byte more to notice one that grew meanwhile.
        let capacity = min(Int(info.st_size), limit) + 1
        var data = Data(count: capacity)
        let count = data.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, capacity) }
        guard count >= 0, count < capacity else { throw failure }
        return data.prefix(count)
    }
    /// What an id becomes in a credential variable's name: ids equal here share credentials.
    public static func credentialKey(_ id: String) -> String {
        id.uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
    }

    /// A provider id: letters, digits, `-` and `_`, so it names a file and nothing else.
    public static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
