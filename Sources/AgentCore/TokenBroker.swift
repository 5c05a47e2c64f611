import FoundationEssentials
import Logging
import OAuthCore

/// The agent's tokens: one `Provider` per provider asked about, kept for as long
/// as the agent runs, so that every program shares one session per provider and
/// with it one refresh at a time (and, through the store's lock, one across
/// processes). The store is read again (at most once a second per provider): the window,
/// or `latchkey token` run while no agent did, may have signed in, out or renewed.
public actor TokenBroker {
    /// How the broker makes a provider's configuration: from the catalog, with the stored client
    /// secret (the app passes its own, which knows the sandbox is the window's alone).
    public typealias Configure = @Sendable (String) async throws -> ProviderConfiguration

    private let catalog: ProviderCatalog
    private let store: any TokenStore
    private let network: Network
    let accounts: AccountList?
    private let zeroConfiguration: ZeroConfiguration?
    private let configure: Configure
    private var providers: [String: Provider] = [:]
    /// How often a provider's stored sign-in is read again, at most: what another process
    /// (the window, `latchkey token` without the agent) changed counts from then on.
    private let storeRecheck: Duration
    private var lastRead: [String: ContinuousClock.Instant] = [:]
    /// The person's provider files as they were when `providers` were last checked.
    private var providerFiles: [String: FileStamp] = [:]
    private var lastFilesCheck: ContinuousClock.Instant?
    /// Providers whose files may have changed since they were made: checked at their next use.
    private var stale: Set<String> = []
    /// What the catalog said of an id (nil: no such provider), read again after `storeRecheck`: a
    /// provider file added, changed or removed counts within that, as the store does, and a request
    /// does not read and parse its provider's files (a dozen stats and a JSON parse) each time.
    private var named: [String: (known: Result<Known, AgentRefusal>?, at: ContinuousClock.Instant)] = [:]
    /// Told when a renewal found that the provider ended a sign-in (`AuthSession.ended`): the agent's notice.
    private let onEnded: Ended?

    /// The provider's id and name, the account's key and name (nil: its list names none), and why it ended.
    public typealias Ended =
        @Sendable (_ provider: (id: String, name: String), _ key: String, _ account: String?, AuthSession.Ended) async -> Void

    /// What a question about a provider says of it (`ProviderCatalog.questionWords`).
    typealias Known = ProviderCatalog.QuestionWords

    public init(
        catalog: ProviderCatalog, store: any TokenStore, network: Network, accounts: AccountList?,
        zeroConfiguration: ZeroConfiguration?, storeRecheck: Duration = .seconds(1), configure: @escaping Configure,
        ended: Ended? = nil
    ) {
        onEnded = ended
        self.storeRecheck = storeRecheck
        self.catalog = catalog
        self.store = store
        self.network = network
        self.accounts = accounts
        self.zeroConfiguration = zeroConfiguration
        self.configure = configure
    }

    /// The provider a request is for: its id and name. A resource's is found (and registered) as
    /// `latchkey token --resource` finds it.
    public func provider(for target: AgentRequest.Target) async throws(AgentRefusal) -> (id: String, name: String) {
        let provider = try await self.provider(target)
        return (provider.configuration.id, provider.configuration.displayName)
    }

    /// Whose token a request is for: the provider's id, the account's key (`Account.key`: what a
    /// program is allowed for; the provider's id for its first account), and their name as the
    /// person knows them (the account named beside the provider's when it has several).
    ///
    /// Read from the person's files alone (the catalog, the account list): nothing is fetched and no
    /// keyring is read before the person has allowed the program, so that how long finding the account
    /// took says nothing of which providers are set up (a provider's first use fetches its discovery).
    public func account(for request: AgentRequest) async throws(AgentRefusal) -> TokenOwner {
        let id = try await self.id(of: request.target)
        // A file that cannot be read is refused here, never made (and its keyring read) to find out.
        guard let known = known(id) else {
            throw AgentRefusal(
                .invalid, "There is no provider called “\(Redaction.printable(String(id.prefix(64))))”; `latchkey status` lists them.")
        }
        let words = try known.get()
        let displayName = words.displayName
        let entry = accounts?.entry(for: id) ?? AccountList.Entry()
        let key: String
        do { key = try entry.key(forAccount: request.account, of: id, displayName: displayName) } catch { throw AgentRefusal(error) }
        let label = entry.account(key: key)?.label
        let several = entry.accounts.count > 1 || key != id
        return TokenOwner(
            providerID: id, accountKey: key, name: several && label != nil ? "\(displayName) (\(label!))" : displayName,
            person: Self.person(signedIn: entry.account(key: key)?.subject, standIn: standIn(words.standIn), words.standIn),
            narrows: words.narrows, scopeWords: words.scopeWords)
    }

    /// A token for `request`, from the provider its target names.
    public func token(for request: AgentRequest) async -> Result<AgentToken, AgentRefusal> {
        do {
            return .success(try await token(from: try await provider(request.target), request))
        } catch {
            return .failure(error)
        }
    }

    /// A token for `request` of `owner`'s account, which `account(for:)` already found for it: that
    /// account's, even if another is in use by now.
    public func token(for request: AgentRequest, of owner: TokenOwner) async -> Result<AgentToken, AgentRefusal> {
        var resolved = request
        resolved.target = .provider(owner.providerID)
        resolved.accountKey = owner.accountKey
        return await token(for: resolved)
    }

    /// Signs out of `id`'s account in use, or of the one `account` names (revoking where its provider
    /// can): nil, or a sentence when something was left.
    public func signOut(_ id: String, account: String? = nil) async throws(AgentRefusal) -> String? {
        let provider = try await provider(.provider(id))
        let key: String
        if let account {
            do { key = try await provider.session(forAccount: account).accountKey } catch { throw AgentRefusal(error) }
        } else {
            key = provider.accountInUseKey
        }
        return await provider.signOut(account: key)
    }

    /// The known future of every sign-in the agent holds now (an account a program asked for since it
    /// started): read from memory, never the store, so that looking at them shows no keyring prompt.
    public func futures() async -> [(providerID: String, providerName: String, accountKey: String, account: String?, future: SignInFuture)]
    {
        var found: [(providerID: String, providerName: String, accountKey: String, account: String?, future: SignInFuture)] = []
        for provider in providers.values {
            let configuration = provider.configuration
            for session in provider.sessionsMade {
                guard let token = await session.heldToken else { continue }
                let label = accounts?.entry(for: configuration.id).account(key: session.accountKey)?.label
                found.append(
                    (
                        configuration.id, configuration.displayName, session.accountKey, label,
                        SignInFuture(token: token, configuration: configuration)
                    ))
            }
        }
        return found
    }

    /// Another process (the sign-in the agent started, the window) changed what is stored: every
    /// account's sign-in is read again at its next use, not `storeRecheck` later.
    public func storeChangedElsewhere() {
        lastRead.removeAll()
    }

    /// The provider in use for `id`, for a sign-in the agent shows.
    public func provider(id: String) async throws(AgentRefusal) -> Provider {
        try await provider(.provider(id))
    }

    // MARK: Steps

    private func token(from provider: Provider, _ request: AgentRequest) async throws(AgentRefusal) -> AgentToken {
        let configuration = provider.configuration
        guard configuration.authProtocol == .oauth2 else {
            throw AgentRefusal(
                .invalid,
                "\(configuration.displayName) signs in with OAuth 1.0a, where each request is signed with a secret instead of carrying a token: there is no token to give."
            )
        }
        if let audience = request.audience, audience != configuration.resource?.absoluteString,
            AgentRequest.resourceURL(audience) == nil
        {
            throw AgentRefusal(
                .invalid,
                "A token for the audience “\(Redaction.printable(audience))” was asked for; Latchkey narrows a token to a resource's URL (https://…, RFC 8707), which this is not."
            )
        }
        let session: AuthSession
        if let key = request.accountKey {
            session = provider.session(key: key)
        } else {
            do { session = try await provider.session(forAccount: request.account) } catch { throw AgentRefusal(error) }
        }
        let now = ContinuousClock.now
        if lastRead[session.accountKey].map({ now - $0 >= storeRecheck }) ?? true {
            lastRead[session.accountKey] = now
            await session.rereadStoreAtNextUse()
        }
        var narrowing = request.narrowing
        if narrowing.resource == configuration.resource { narrowing = Narrowing(scopes: narrowing.scopes) }
        // A provider that gives its tokens whole: the whole token, as the person was told when asked.
        let narrowed = !narrowing.isWhole && configuration.narrowing != .none
        if configuration.grant.mints {
            // Had with nobody involved: no more than the provider file names, for its resource alone.
            try Self.checkMinted(narrowing, request, configuration)
        } else if narrowed, let signedIn = await session.currentToken() {
            // What the sign-in has not, no narrowing gives: said as it is said of the whole token.
            try Self.check(scopes: request.scopes, within: signedIn.allowedScopes(asked: configuration.scopes), configuration)
        }
        if !narrowed, let resource = narrowing.resource {
            throw AgentRefusal(
                .invalid,
                "A token for \(Redaction.printable(resource.absoluteString)) alone was asked for; \(configuration.displayName) gives its tokens whole, for \(configuration.resource.map { Redaction.printable($0.absoluteString) } ?? "its own API")."
            )
        }
        let token = try await fetch(from: session, narrowed ? narrowing : nil, request, configuration)
        let granted = token.allowedScopes(asked: narrowed ? narrowing.scopes : configuration.scopes)
        try Self.check(scopes: request.scopes, within: granted, configuration)
        let minimum =
            request.minimumWithinLifetime
            ? min(request.minimumValidity, token.halfLifetime.map { Int($0) } ?? .max) : request.minimumValidity
        try Self.check(token, lastsFor: minimum, providerName: configuration.displayName)
        var answer = AgentToken(
            accessToken: token.accessToken, tokenType: token.tokenType, expiresAt: token.expiresAt, scopes: granted,
            provider: configuration.id, issuer: configuration.issuer?.absoluteString ?? configuration.tokenEndpoint.absoluteString)
        if let asked = request.proof {
            answer.proof = try await Self.proof(
                asked, for: token, of: session, resource: narrowed ? narrowing.resource : configuration.resource)
        }
        return answer
    }

    /// A DPoP proof for `asked`, to go with `token` (nil for a bearer token), where one may be signed.
    private static func proof(_ asked: AgentRequest.ProofRequest, for token: Token, of session: AuthSession, resource: URL?)
        async throws(AgentRefusal) -> String?
    {
        if let problem = asked.problem(for: session.configuration, resource: resource) { throw AgentRefusal(.invalid, problem) }
        do { return try await session.proof(for: token, method: asked.method, url: asked.url, nonce: asked.nonce) } catch {
            throw AgentRefusal(error)
        }
    }

    /// The sign-in's token, or one for `narrowing` alone.
    private func fetch(
        from session: AuthSession, _ narrowing: Narrowing?, _ request: AgentRequest, _ configuration: ProviderConfiguration
    ) async throws(AgentRefusal) -> Token {
        do {
            if let narrowing {
                return try await session.narrowedToken(
                    narrowing, validFor: TimeInterval(max(0, request.minimumValidity)),
                    renewing: request.minimumValidity == AgentRequest.renewNow)
            }
            return request.minimumValidity == AgentRequest.renewNow
                ? try await session.renewedToken()
                : try await session.freshToken(
                    validFor: TimeInterval(request.minimumValidity), withinLifetime: request.minimumWithinLifetime)
        } catch {
            let refusal = AgentRefusal(error)
            guard refusal.kind == .signedOut else { throw refusal }
            if let ended = await session.ended, let onEnded {
                let account = accounts?.entry(for: configuration.id).account(key: session.accountKey)?.label
                await onEnded((configuration.id, configuration.displayName), session.accountKey, account, ended)
            }
            // Reached through the identity provider: the sign-in to make is there.
            let signIn = configuration.grant == .idJAG ? configuration.identityProvider ?? configuration.id : configuration.id
            throw AgentRefusal(.signedOut, "\(refusal.sentence) Sign in with: latchkey --provider \(signIn)")
        }
    }

    private func provider(_ target: AgentRequest.Target) async throws(AgentRefusal) -> Provider {
        // A provider file added, replaced or removed: each provider's configuration is made again at
        // its next use, and its session kept when the configuration is the same (a session may hold
        // a renewed token its store did not take).
        // Looked at no more often than the store (a directory listing per request adds up under load).
        let now = ContinuousClock.now
        if lastFilesCheck.map({ now - $0 >= storeRecheck }) ?? true {
            lastFilesCheck = now
            let stamp = Self.providerFilesStamp(catalog.userConfigDirectory)
            if stamp != providerFiles {
                stale = Set(providers.keys)
                providerFiles = stamp
            }
        }
        let id = try await self.id(of: target)
        if let provider = providers[id], !stale.contains(id) { return provider }
        let configuration: ProviderConfiguration
        do {
            configuration = try await configure(id)
        } catch {
            throw AgentRefusal(.invalid, "\(error)")
        }
        stale.remove(id)
        if let kept = providers[id], kept.configuration == configuration { return kept }
        let provider = Provider(
            configuration: configuration, store: store, network: network, accounts: accounts,
            identityProviders: { [weak self] id in
                guard let self else { throw OAuthError.unknownProvider(id) }
                return try await self.provider(id: id)
            })
        providers[id] = provider
        return provider
    }

    /// What the person's provider files (`*.json`) are now: names, and each one's `stat`. Nothing
    /// else in the directory (the allowed programs beside them) counts.
    static func providerFilesStamp(_ directory: URL) -> [String: FileStamp] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var stamp: [String: FileStamp] = [:]
        for name in names where name.hasSuffix(".json") {
            stamp[name] = FileStamp(of: directory.appendingPathComponent(name).path)
        }
        return stamp
    }

    /// The provider `id`'s name as the person knows it (or why its files cannot be read); nil when
    /// there is no provider by that name. From the catalog at most once per `storeRecheck`.
    private func known(_ id: String) -> Result<Known, AgentRefusal>? {
        let now = ContinuousClock.now
        if let kept = named[id], now - kept.at < storeRecheck { return kept.known }
        var known: Result<Known, AgentRefusal>?
        if catalog.contains(id) {
            do {
                known = .success(try catalog.questionWords(named: id))
            } catch {
                known = .failure(AgentRefusal(.invalid, "\(error)"))
            }
        }
        // Only names there are, or were asked for in earnest: a program guessing names fills nothing for long.
        if named.count > 256 { named.removeAll() }
        named[id] = (known, now)
        return known
    }

    private func id(of target: AgentRequest.Target) async throws(AgentRefusal) -> String {
        switch target {
        case .provider(let id):
            guard known(id) != nil else {
                throw AgentRefusal(
                    .invalid, "There is no provider called “\(Redaction.printable(String(id.prefix(64))))”; `latchkey status` lists them.")
            }
            return id
        case .issuer(let issuer):
            let wanted = Self.normalized(issuer)
            for (id, _) in catalog.availableProviders {
                if let draft = try? catalog.draft(named: id), let own = draft.issuer, Self.normalized(own.absoluteString) == wanted {
                    return id
                }
            }
            throw AgentRefusal(
                .invalid,
                "No provider of yours has the issuer \(Redaction.printable(String(issuer.prefix(256)))); `latchkey status` lists them.")
        case .resource(let url):
            // Nothing is asked of any server before the person has said yes: a resource is served once
            // it has a provider, which a sign-in of the person's own made.
            guard let zeroConfiguration else { throw AgentRefusal(.invalid, "Tokens for resources are not offered here.") }
            let saved: String?
            do { saved = try zeroConfiguration.savedProvider(for: url) } catch { throw AgentRefusal(.invalid, "\(error)") }
            guard let saved else {
                let shown = Redaction.printable(String(url.absoluteString.prefix(256)))
                throw AgentRefusal(.signedOut, "You have not signed in for \(shown) yet. Sign in once: latchkey token --resource \(shown)")
            }
            return saved
        }
    }

    /// Refuses a request for `scopes` a token (or the sign-in) that has `granted` cannot serve.
    static func check(scopes: [String], within granted: [String], _ configuration: ProviderConfiguration) throws(AgentRefusal) {
        let missing = scopes.filter { !granted.contains($0) }
        guard missing.isEmpty else {
            throw AgentRefusal(
                .signedOut,
                "Your \(configuration.displayName) sign-in allows \(granted.isEmpty ? "no named scopes" : granted.joined(separator: " ")), "
                    + "not \(missing.joined(separator: " ")). Ask for those in the provider's file (\"scopes\") and sign in again.")
        }
    }

    /// Refuses `token` when it is good for less than `seconds` more (after any renewal the caller tried).
    public static func check(_ token: Token, lastsFor seconds: Int, providerName: String) throws(AgentRefusal) {
        guard seconds > 0, let expiresAt = token.expiresAt, expiresAt.timeIntervalSinceNow < TimeInterval(seconds) else { return }
        throw AgentRefusal(
            .failed,
            "\(providerName)'s token is good for \(max(0, Int(expiresAt.timeIntervalSinceNow))) more seconds, "
                + "less than the \(seconds) asked, and "
                + (token.canRefresh ? "its renewal gave no longer." : "it cannot be renewed without signing in again."))
    }

    /// An issuer as compared: without a trailing slash (oidc-agent's users write either).
    static func normalized(_ issuer: String) -> String {
        issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
    }
}

/// Whose token: a provider's account, as a program is allowed for it.
public struct TokenOwner: Sendable, Equatable {
    public let providerID: String
    /// The account's key: the provider's id for its first account, `<provider>@<hex>` for each other.
    public let accountKey: String
    /// As the person knows it: the provider's name, and the account's beside it when there are several.
    public let name: String
    /// Who is signed in under the key: the digest of the provider's subject (`AccountRecord.subject`);
    /// nil while not known. The key is the next person's once this one signs out.
    public var person: String? = nil
    /// Whether its provider can narrow a token (`ProviderConfiguration.narrowing` is not `none`).
    public var narrows = true
    /// Its scopes in words, from the provider file (`scope_descriptions`).
    public var scopeWords: [String: String] = [:]
}
