import FoundationEssentials
import OAuthCore

/// Setting up a provider that lacks its credentials, and adding one of the
/// person's own: what is kept where and in which order. The dialogs only ask
/// and show; every rule is here, and tested without a display.
public struct ProviderSetUp: Sendable {
    /// Makes providers from an issuer or a resource, and owns the catalog and secrets they are kept in.
    public let zeroConfiguration: ZeroConfiguration

    public init(zeroConfiguration: ZeroConfiguration) {
        self.zeroConfiguration = zeroConfiguration
    }

    private var catalog: ProviderCatalog { zeroConfiguration.catalog }

    /// Whether `draft` takes a client secret: a provider that authenticates needs its secret;
    /// a public one takes none, unless it is the person's own (no preset of that name), whose
    /// registration may have one after all.
    public func secretNeed(for draft: ProviderConfiguration) -> SetUpForm.SecretNeed {
        if draft.needsClientSecret { return .required(stored: !(draft.clientSecret ?? "").isEmpty) }
        return catalog.presetFile(named: draft.id) == nil ? .optional : .none
    }

    /// Keeps what the set-up dialog was given for `draft`: the secret in the secret store
    /// first, then the client id in the person's file, from which a secret kept there in
    /// clear is removed. A secret that cannot be kept leaves the file as it was.
    /// Returns the sentence that says where each went.
    public func save(_ answer: SetUpForm.Answer, for draft: ProviderConfiguration) async throws -> String {
        let id = draft.id
        var place: String?
        // The person's own provider, registered with a secret after all: it is sent as
        // RFC 6749 §2.3.1 requires every server to accept.
        let upgrade =
            answer.secret != nil && secretNeed(for: draft) == .optional && draft.authProtocol == .oauth2
            && draft.clientAuthentication == .none
        if let secret = answer.secret { place = try await zeroConfiguration.secrets.save(secret, for: id) }
        try catalog.updateUserFile(for: id) { file in
            file.clientID = .value(answer.clientID)
            if answer.secret != nil { file.clientSecret = .unset }
            if upgrade { file.clientAuthentication = .value(.clientSecretBasic) }
        }
        return "\(draft.displayName) is set up: its client id is in \(catalog.userFile(for: id).path)"
            + (place.map { ", its secret in \($0)." } ?? ".") + " Sign in to begin."
    }

    /// A provider added from `source`; its id, and what to say about it when not all went well.
    ///
    /// Every check that can refuse an id runs before anything stored under it is cleared (see
    /// `ZeroConfiguration.clearLeftBehind`): a name that belongs to another provider loses nothing.
    /// With `organisationsIdentityProvider`, it is marked as the organisation's identity provider
    /// (`"enterprise_idp": true`): MCP servers that take its ID-JAGs are reached through its sign-in.
    public func add(_ source: SetUpForm.Source, organisationsIdentityProvider: Bool) async throws -> (id: String, notice: String?) {
        let added = try await add(source)
        if organisationsIdentityProvider {
            try catalog.updateUserFile(for: added.id) { $0.enterpriseIdentityProvider = .value(true) }
        }
        return added
    }

    public func add(_ source: SetUpForm.Source) async throws -> (id: String, notice: String?) {
        switch source {
        case .issuer(let issuer):
            // A file naming the issuer alone, registered where the server allows.
            return (try await zeroConfiguration.prepare(issuer: issuer).id, nil)
        case .resource(let text):
            guard let url = URL(string: text) else { throw OAuthError.invalidConfiguration("“\(text)” is not a URL.") }
            let prepared = try await zeroConfiguration.prepare(resource: url)
            // Kept without a client id (the server lets no app register): listed, with Set up… and the reason.
            return (prepared.id, prepared.problem.map(Self.sentence))
        case .file(let path):
            return try await add(file: URL(fileURLWithPath: PathText.expandingTilde(path)))
        }
    }

    private func add(file: URL) async throws -> (id: String, notice: String?) {
        // A file that names only its issuer is checked against the issuer's discovery document.
        try await catalog.refreshDiscovery(file: file, network: zeroConfiguration.network)
        let added = try catalog.addProvider(file: file, reservedIDs: zeroConfiguration.reservedIDs)
        // No provider had this id (addProvider refuses one that is taken), so whatever is stored
        // under it was left by one removed by hand: it must not reach this provider's endpoints.
        await zeroConfiguration.clearLeftBehind(added.id)
        guard let secret = added.clientSecret else { return (added.id, nil) }
        do {
            try await zeroConfiguration.secrets.save(secret, for: added.id)
            return (added.id, nil)
        } catch {
            return (added.id, "\(error) Choose Set up… to give the secret again.")
        }
    }

    /// An error for a dialog's problem line, which needs no "the provider configuration is not usable" before it.
    public static func sentence(for error: any Error) -> String {
        guard case OAuthError.invalidConfiguration(let reason) = error else { return "\(error)" }
        return OAuthError.sentence(reason)
    }
}
