import Foundation

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
    public var environment: [String: String]
    /// The prefix of the credential variables (`LATCHKEY` reads `LATCHKEY_GITHUB_CLIENT_ID`);
    /// nil: credentials come from files only.
    public var credentialPrefix: String?
    /// Where discovery documents are kept for providers that name only their issuer;
    /// nil: such providers cannot be used.
    public var discovery: DiscoveryCache?

    public init(
        presetDirectories: [URL], userConfigDirectory: URL, environment: [String: String] = [:],
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

    /// Every provider a person can choose: the presets and the providers of their
    /// own config directory, each with the name it shows, sorted by that name.
    /// Read without validation, so a provider that still lacks its client id is listed too.
    public var availableProviders: [(id: String, displayName: String)] {
        let own = ((try? FileManager.default.contentsOfDirectory(atPath: userConfigDirectory.path)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter(Self.isPlainName)
        return Set(presetNames + own).map { id in
            let layers = [presetFile(named: id), userFile(for: id)].compactMap { $0 }.compactMap { try? Self.readObject($0) }
            // A file naming only its issuer shows the issuer's place, as its discovered layer would.
            let name =
                layers.compactMap { $0["display_name"] as? String }.last
                ?? layers.last.flatMap(Self.issuerNames)?.place
            return (id, Redaction.printable(name ?? id))
        }.sorted { ($0.displayName.lowercased(), $0.id) < ($1.displayName.lowercased(), $1.id) }
    }

    /// Sets keys of the person's own file for provider `id` (nil removes one),
    /// keeping everything else in it; written whole, readable by the person only.
    public func saveUserSettings(_ settings: [String: String?], for id: String) throws {
        guard Self.isPlainName(id) else { throw OAuthError.unknownProvider(id) }
        let file = userFile(for: id)
        var object = FileManager.default.fileExists(atPath: file.path) ? try Self.readObject(file) : [:]
        for (key, value) in settings { object[key] = value }
        try writeUserFile(object, for: id)
    }

    /// Writes the person's whole file for provider `id`: 0600 in a 0700 directory, replaced atomically.
    func writeUserFile(_ object: [String: Any], for id: String) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        do {
            try PrivateFile.prepareDirectory(userConfigDirectory)
            try PrivateFile.replace(userFile(for: id), with: data)
        } catch {
            throw OAuthError.invalidConfiguration("Latchkey \(error.sentence("could not write"))")
        }
    }

    /// Provider `id` ready to use: its layers, the client secret `secrets` keeps when
    /// no layer gives one (typed into a set-up dialog, or given by a registration),
    /// then the checks. Asks `secrets`, which may be a keyring: not for a GUI thread.
    /// A provider that names only its issuer has its discovery document brought up to date first.
    public func configuration(
        named id: String, secrets: any ClientSecretStore, transport: any HTTPTransport = CurlTransport.shared, timeout: Double = 15
    ) async throws -> ProviderConfiguration {
        try await refreshDiscovery(named: id, transport: transport, timeout: timeout)
        return try await completed(draft(named: id), secrets: secrets)
    }

    /// For a provider whose layers name its issuer and neither endpoint: its discovery
    /// document, fetched or confirmed if the kept copy is not fresh, or the kept copy
    /// when the server cannot be asked (see `DiscoveryCache.document`). Nil for every
    /// other provider, which needs no request. Throws a sentence when there is no copy
    /// and none can be had.
    @discardableResult
    public func refreshDiscovery(
        named name: String, transport: any HTTPTransport = CurlTransport.shared, timeout: Double = 15
    ) async throws -> DiscoveryCache.Source? {
        try await refreshDiscovery(layers: layers(base: base(named: name), overrides: [:]), transport: transport, timeout: timeout)
    }

    /// `refreshDiscovery(named:)` for a provider described by `file`.
    @discardableResult
    public func refreshDiscovery(
        file: URL, transport: any HTTPTransport = CurlTransport.shared, timeout: Double = 15
    ) async throws -> DiscoveryCache.Source? {
        try await refreshDiscovery(layers: layers(base: Self.readObject(file), overrides: [:]), transport: transport, timeout: timeout)
    }

    private func refreshDiscovery(layers object: [String: Any], transport: any HTTPTransport, timeout: Double) async throws
        -> DiscoveryCache.Source?
    {
        guard Self.needsDiscovery(object), let issuer = object["issuer"] as? String else { return nil }
        guard let discovery else { throw Self.noDiscovery(issuer) }
        do {
            return try await discovery.document(issuer: issuer, transport: transport, timeout: timeout).source
        } catch OAuthError.issuerSpelledOtherwise(let asked, let named) {
            // Written before issuers were compared exactly, a file of Latchkey's may hold the issuer
            // without the trailing slash its server names itself with: kept as the server names it
            // from now on, then checked exactly like any other. A file of the person's own stays theirs.
            guard let id = object["id"] as? String, var own = try? Self.readObject(userFile(for: id)),
                own["issuer"] as? String == issuer, Self.isDiscovered(own)
            else { throw OAuthError.issuerSpelledOtherwise(asked: asked, named: named) }
            own["issuer"] = named
            try writeUserFile(own, for: id)
            return try await discovery.document(issuer: named, transport: transport, timeout: timeout).source
        }
    }

    /// A provider file that names its issuer and neither endpoint is completed from discovery.
    static func needsDiscovery(_ object: [String: Any]) -> Bool {
        object["issuer"] is String && object["authorization_endpoint"] == nil && object["token_endpoint"] == nil
    }

    private static func noDiscovery(_ issuer: String) -> OAuthError {
        .invalidConfiguration("the provider names only its issuer (\(issuer)), and this program keeps no discovery documents.")
    }

    /// `object` under what the issuer's kept discovery document says (its own keys win), read
    /// without a request; a sentence when no copy is kept yet.
    func withDiscoveredEndpoints(_ object: [String: Any]) throws -> [String: Any] {
        guard Self.needsDiscovery(object), let text = object["issuer"] as? String else { return object }
        let (issuer, _) = try ProviderDiscovery.issuerURL(text)
        guard let discovery else { throw Self.noDiscovery(issuer) }
        guard let document = discovery.cachedDocument(issuer: issuer) else {
            throw OAuthError.invalidConfiguration(
                "\(issuer)'s discovery document, where this provider's endpoints are, has not been read yet. Check your connection and try again."
            )
        }
        let discovered = try ProviderDiscovery.providerFile(issuer: issuer, document: document)
        return Self.merged(discovered, with: object)
    }

    /// `draft` with the client secret `secrets` keeps for it when no layer gives one, then checked.
    public func completed(_ draft: ProviderConfiguration, secrets: any ClientSecretStore) async throws -> ProviderConfiguration {
        var configuration = draft
        if configuration.lacksClientSecret {
            do {
                configuration.clientSecret = try await secrets.load(for: configuration.id)
            } catch OAuthError.storage(let reason) {
                throw OAuthError.invalidConfiguration("the client secret of \(configuration.displayName) could not be read: \(reason)")
            }
        }
        return try validated(configuration)
    }

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
        try layers(base: base(named: name), overrides: [:])["id"] as! String
    }

    /// `readableID(named:)` for a provider described by `file`.
    public func readableID(file: URL) throws -> String {
        try layers(base: Self.readObject(file), overrides: [:])["id"] as! String
    }

    /// The first layer of provider `name`: its preset, or just its id for one of the person's own.
    private func base(named name: String) throws -> [String: Any] {
        guard contains(name) else { throw OAuthError.unknownProvider(name) }
        return try presetFile(named: name).map(Self.readObject) ?? ["id": name]
    }

    public func draft(file: URL, overrides: [String: String] = [:]) throws -> ProviderConfiguration {
        try draft(base: Self.readObject(file), overrides: overrides)
    }

    /// `configuration` checked against the security rules, its errors naming
    /// where this catalog reads a missing credential.
    public func validated(_ configuration: ProviderConfiguration) throws -> ProviderConfiguration {
        try configuration.validate(place: { credential in place(of: credential, for: configuration.id) })
        return configuration
    }

    /// Adds a provider of the person's own from the bytes of a provider file:
    /// written as `<config>/<id>.json`, 0600, without its `client_secret`,
    /// which is returned for the caller to keep in a `ClientSecretStore`.
    /// Refuses a file that is not of the provider shape, and an id already taken (here, or by the
    /// program: `reservedIDs`).
    public func addProvider(from data: Data, name: String, reservedIDs: Set<String> = []) throws -> (id: String, clientSecret: String?) {
        var object = try Self.object(from: data, file: URL(fileURLWithPath: name))
        if object["id"] == nil, let names = Self.issuerNames(object) { object["id"] = names.id }
        guard let id = object["id"] as? String, Self.isPlainName(id), !id.hasPrefix("_") else {
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
        if let name = (object["display_name"] as? String).map(Redaction.printable),
            let clash = taken.first(where: { $0.displayName.lowercased() == name.lowercased() })
        {
            throw OAuthError.invalidConfiguration(
                "there is a provider shown as “\(clash.displayName)” already; give this one another display_name.")
        }
        let secret = (object.removeValue(forKey: "client_secret") as? String).flatMap { $0.isEmpty ? nil : $0 }
        if secret != nil, object["client_authentication"] as? String == "none" {
            throw OAuthError.invalidConfiguration(
                "\(name) gives a client_secret, but its client_authentication is \"none\": a public client has no secret. Remove one of the two."
            )
        }
        // Checked as it will be read back, against the same rules, with stand-ins for the
        // credentials the set-up dialog gives later: a provider that could never be used is not written.
        var check = try withDiscoveredEndpoints(object)
        try Self.resolveEndpoints(in: &check)
        if (check["client_id"] as? String ?? "").isEmpty { check["client_id"] = "to-be-set-up" }
        // The secret the file gave (kept elsewhere) still decides how the client authenticates.
        if secret != nil { check["client_secret"] = "to-be-set-up" }
        var configuration = try Self.decode(check)
        // And one the provider needs (client authentication, or an OAuth 1.0a signature) is given later.
        if configuration.lacksClientSecret { configuration.clientSecret = "to-be-set-up" }
        try configuration.validate()
        try writeUserFile(object, for: id)
        return (id, secret)
    }

    /// `addProvider(from:name:)` with the bytes of `file` (see `read`).
    public func addProvider(file: URL, reservedIDs: Set<String> = []) throws -> (id: String, clientSecret: String?) {
        try addProvider(from: Self.read(file), name: file.path, reservedIDs: reservedIDs)
    }

    func draft(base: [String: Any], overrides: [String: String]) throws -> ProviderConfiguration {
        var object = try withDiscoveredEndpoints(layers(base: base, overrides: overrides))
        object["client_id"] = object["client_id"] ?? ""
        try Self.resolveEndpoints(in: &object)
        return try Self.decode(object)
    }

    /// The provider's layers merged, before discovery and checks.
    func layers(base: [String: Any], overrides: [String: String]) throws -> [String: Any] {
        var object = base
        guard let id = (overrides["id"] ?? object["id"] as? String ?? Self.issuerNames(object)?.id), Self.isPlainName(id) else {
            throw OAuthError.invalidConfiguration("the provider file has no usable \"id\" (letters, digits, - and _).")
        }
        let user = userFile(for: id)
        if FileManager.default.fileExists(atPath: user.path) {
            object = Self.merged(object, with: try Self.readObject(user))
        }
        // A provider made from what a server said of itself takes nothing from the environment: its
        // id came from that server, and a variable meant for a provider of the person's could match it.
        if !Self.isDiscovered(object) {
            if let variable = credentialVariable(for: id, "CLIENT_ID"), let clientID = environment[variable], !clientID.isEmpty {
                object["client_id"] = clientID
            }
            if let variable = credentialVariable(for: id, "CLIENT_SECRET"), let secret = environment[variable], !secret.isEmpty {
                object["client_secret"] = secret
            }
        }
        object.merge(overrides) { _, new in new }
        object["id"] = id
        return object
    }

    /// Whether a provider's layers were written by `ZeroConfiguration` for a resource or an issuer
    /// (marked with `origin`, or, written before that mark, holding a registration), whose id a
    /// server's URL chose.
    static func isDiscovered(_ object: [String: Any]) -> Bool {
        object[originKey] != nil || object["registration_client_uri"] != nil
    }

    /// The key that marks a file written for a resource or an issuer, and what it was made from.
    static let originKey = "origin"

    /// The id and name of a file that names only its issuer, where it gives none: the
    /// issuer's, as its discovered layer has them (see `ProviderDiscovery.names`).
    static func issuerNames(_ object: [String: Any]) -> (id: String, place: String)? {
        guard needsDiscovery(object), let text = object["issuer"] as? String, let (_, url) = try? ProviderDiscovery.issuerURL(text)
        else { return nil }
        return ProviderDiscovery.names(of: url)
    }

    static func decode(_ object: [String: Any]) throws -> ProviderConfiguration {
        do {
            let data = try JSONSerialization.data(withJSONObject: object)
            return try JSONDecoder().decode(ProviderConfiguration.self, from: data)
        } catch let error as DecodingError {
            throw OAuthError.invalidConfiguration(Self.explain(error))
        }
    }

    /// Where this catalog reads `credential` for provider `id`, in words.
    func place(of credential: String, for id: String) -> String {
        let file = userFile(for: id).path
        // A provider made from a server's URL takes nothing from the environment (see `layers`).
        if let own = try? Self.readObject(userFile(for: id)), Self.isDiscovered(own) { return file }
        return credentialVariable(for: id, credential).map { "\(file) or set \($0)" } ?? file
    }

    /// The user's file over the preset, key by key and into nested objects, so
    /// that pointing `profile.url_template_endpoint` elsewhere keeps the rest of
    /// the preset's profile mapping. `null` removes a key.
    static func merged(_ base: [String: Any], with layer: [String: Any]) -> [String: Any] {
        var result = base
        for (key, value) in layer {
            if value is NSNull {
                result[key] = nil
            } else if let inner = value as? [String: Any], let existing = result[key] as? [String: Any] {
                result[key] = merged(existing, with: inner)
            } else {
                result[key] = value
            }
        }
        return result
    }

    /// Appends endpoints written as paths to the issuer.
    static func resolveEndpoints(in object: inout [String: Any]) throws {
        let keys = [
            "authorization_endpoint", "token_endpoint", "revocation_endpoint", "userinfo_endpoint", "jwks_uri", "request_token_endpoint",
        ]
        let issuer = (object["issuer"] as? String).map(Issuer.normalised)
        for key in keys {
            guard let value = object[key] as? String, value.hasPrefix("/") else { continue }
            guard let issuer, !issuer.isEmpty else {
                throw OAuthError.invalidConfiguration("\(key) is a path (\(value)) but there is no issuer to put it under.")
            }
            object[key] = issuer + value
        }
    }

    /// A provider file's JSON object (see `read`).
    public static func readObject(_ file: URL) throws -> [String: Any] {
        try object(from: read(file), file: file)
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

    static func object(from data: Data, file: URL) throws -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw OAuthError.invalidConfiguration("\(file.path) is not a JSON object.")
        }
        return object
    }

    static func explain(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.reduce("") { path, key in
                if let index = key.intValue { return "\(path)[\(index)]" }
                return path.isEmpty ? key.stringValue : "\(path).\(key.stringValue)"
            }
        }
        switch error {
        case .keyNotFound(let key, _): return "the field \"\(key.stringValue)\" is missing."
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "the field \"\(path(context))\" has the wrong kind of value."
        case .dataCorrupted(let context):
            return "the field \"\(path(context))\" is not valid\(context.codingPath.isEmpty ? " JSON" : "")."
        @unknown default: return "the file does not have the expected shape."
        }
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
