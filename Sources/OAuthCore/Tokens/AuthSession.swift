import FoundationEssentials
import Logging

/// Keeps one account's tokens (one provider's, for a program with one account each): hands out a fresh access token, refreshing it
/// when it expires within a minute, and forgets it on sign-out.
///
/// Concurrent callers share a single refresh (single flight). A refresh that
/// fails for a passing reason — the network, a 5xx — keeps the refresh token;
/// only `invalid_grant` (or a provider that offers no refresh at all) signs out.
public actor AuthSession {
    public nonisolated let configuration: ProviderConfiguration
    public nonisolated let store: any TokenStore
    public nonisolated let tokenClient: TokenClient
    /// The account whose tokens these are: the store's key for them, and their refresh lock's name
    /// (see `Account.key`); the provider's id for its first account.
    public nonisolated let accountKey: String
    /// Refresh when the token expires within this many seconds.
    public let refreshMargin: TimeInterval
    let logger: Logger
    let now: @Sendable () -> Date

    var token: Token?
    /// With the `id_jag` grant: where its ID-JAGs come from (the identity provider's sign-in).
    let enterprise: EnterpriseSource?
    private(set) var loaded = false
    /// The first read of the store, which every early caller waits for.
    private var loading: Task<Void, Never>?
    private var refreshing: Task<Token, any Error>?
    /// The last refresh asked for, whole or for a narrower token: each waits for the one before, so
    /// no two send the same refresh token (`inTurn`).
    var refreshTurn: Task<Void, Never>?
    /// Narrower tokens handed to programs, and those being made (`narrowedToken(_:validFor:)`).
    var narrowed = NarrowedTokens()
    /// The last store call asked for: each waits for the one before, so the
    /// store sees them in the order this session asked (as when its calls
    /// were synchronous), and never two at once.
    private var lastStoreCall: Task<Void, Never>?
    /// Bumped by every sign-in and sign-out: a refresh that started before one
    /// must not undo it when it finishes.
    private(set) var generation = 0
    /// Set when the store held something unreadable: say it once, next to "signed out".
    public private(set) var storeWarning: String?
    /// Set when a renewed token could not be saved: it is in use in this process,
    /// and the next save tries again. Nil once a save succeeds.
    public private(set) var storageProblem: String?
    /// Set when the provider ended the sign-in as this session tried to renew it (`invalid_grant`, or an
    /// expired sign-in with no refresh token): why, and when this session found out. A program that
    /// tells people (the agent's notifications) reads it after a `signedOut`; a new sign-in clears it.
    public private(set) var ended: Ended?

    public init(
        configuration: ProviderConfiguration, store: any TokenStore, tokenClient: TokenClient? = nil,
        refreshMargin: TimeInterval = 60, logger: Logger = Logger(label: "OAuthCore.AuthSession"),
        now: @escaping @Sendable () -> Date = { Date() }, accountKey: String? = nil, enterprise: EnterpriseSource? = nil
    ) {
        self.enterprise = enterprise
        self.configuration = configuration
        self.accountKey = accountKey ?? configuration.id
        self.store = store
        self.tokenClient = tokenClient ?? TokenClient(configuration: configuration)
        self.refreshMargin = refreshMargin
        self.logger = logger
        self.now = now
    }

    /// The stored token, as it is (possibly expired); nil when signed out.
    ///
    /// The store is read once, by the first caller; callers meanwhile wait for
    /// that read. (The store's calls suspend, and this actor serves others
    /// while they do: every `await` below is a point where its state may have
    /// changed, and the code after each one checks what it relies on.)
    public func currentToken() async -> Token? {
        if !loaded {
            let read = loading ?? Task { await self.readStore() }
            loading = read
            await read.value
        }
        return token
    }

    private func readStore() async {
        let stored: Token?
        do {
            stored = try await inOrder { store, id in try await store.load(for: id) }
        } catch {
            guard !loaded else { return }
            loaded = true
            storeWarning = String(describing: error)
            logger.warning("Stored token unreadable; treating as signed out")
            return
        }
        // A sign-in or sign-out while the store answered has the last word.
        guard !loaded else { return }
        loaded = true
        // Another process signed out, in again, or renewed: no narrower token of the sign-in held until now
        // is handed out again (the next person's may be under the same key).
        if stored?.accessToken != token?.accessToken || stored?.refreshToken != token?.refreshToken { narrowed.kept.removeAll() }
        token = stored
        if let stored, stored.issuedBy != configuration.tokenBinding {
            // Never send a token to an endpoint other than the one that issued it:
            // the provider's setup changed (or a file elsewhere now describes it).
            token = nil
            storeWarning =
                "The saved sign-in was not made with \(configuration.displayName) as it is set up now (its client id or token endpoint differ), so it is not sent there. Sign in again."
            logger.warning(
                "Stored token belongs to another provider setup; not using it",
                metadata: ["stored": "\(stored.issuedBy ?? "unknown")", "now": "\(configuration.tokenBinding)"])
        }
    }

    /// Keeps a token that a sign-in just produced. Returns the store's sentence
    /// when it was kept somewhere other than usual (a keyring that did not answer).
    @discardableResult
    public func signIn(with token: Token) async throws -> String? {
        var token = token
        if token.issuedBy == nil { token.issuedBy = configuration.tokenBinding }
        // Before the first await: a refresh answering from now on must not replace this sign-in.
        generation += 1
        ended = nil
        let mine = generation
        let notice = try await inOrder { [token] store, id in try await store.save(token, for: id) }
        // A sign-out or another sign-in asked for after this one has the last word.
        guard generation == mine else { return notice }
        self.token = token
        loaded = true
        storeWarning = nil
        storageProblem = nil
        return notice
    }

    /// A token good for at least `refreshMargin` more seconds (half a short-lived token's life), refreshing if need be.
    public func freshToken() async throws -> Token {
        try await freshToken(validFor: 0)
    }

    /// A token good for at least `seconds` more (and never less than `renewalMargin(for:)`), refreshing
    /// if need be. A provider may still answer a refresh with a shorter lifetime: the caller checks.
    ///
    /// Callers that find a renewal under way wait for it outside the actor: a thousand of them
    /// resume side by side when it ends, rather than one after another through the actor.
    /// `withinLifetime`: `seconds` is a wish, at most half the tokens' lifetime (see `renewalMargin(for:)`).
    public nonisolated func freshToken(validFor seconds: TimeInterval, withinLifetime: Bool = false) async throws -> Token {
        switch try await tokenOrRenewal(validFor: seconds, withinLifetime: withinLifetime) {
        case .token(let token): return token
        case .renewal(let renewal): return try await renewal.value
        }
    }

    private enum Fresh: Sendable {
        case token(Token)
        case renewal(Task<Token, any Error>)
    }

    private func tokenOrRenewal(validFor seconds: TimeInterval, withinLifetime: Bool) async throws -> Fresh {
        guard let token = await currentToken() else {
            // A client in its own name has no sign-in to wait for: its grant is asked.
            guard configuration.grant.mints else {
                throw OAuthError.signedOut(reason: "You are not signed in to \(configuration.displayName).")
            }
            return .renewal(renewal(from: nil, margin: seconds))
        }
        // Had through another sign-in at the identity provider than the one there now: minted anew.
        guard await servable(token) else { return .renewal(renewal(from: nil, margin: .infinity)) }
        let wanted = withinLifetime ? min(seconds, token.halfLifetime ?? seconds) : seconds
        let margin = max(wanted, renewalMargin(for: token))
        guard token.expires(within: margin, now: now()) else { return .token(token) }
        return .renewal(renewal(from: token, margin: margin))
    }

    /// When a token is renewed: `refreshMargin` before it expires, or, for one that lives less than
    /// twice that, once half its life is gone (a 30-second token renewed with 15 seconds left, not at
    /// every use): one renewal per token, however many ask for it.
    func renewalMargin(for token: Token) -> TimeInterval {
        min(refreshMargin, token.halfLifetime ?? refreshMargin)
    }

    /// A token renewed now, however long the one held has left (a caller that knows it is
    /// refused, or asks for a new one as oidc-agent's `-f` does). A token another process
    /// renewed since this one was read counts as renewed.
    public func renewedToken() async throws -> Token {
        guard let token = await currentToken() else {
            if configuration.grant.mints { return try await renewal(from: nil, margin: .infinity).value }
            throw OAuthError.signedOut(reason: "You are not signed in to \(configuration.displayName).")
        }
        return try await refresh(from: token, margin: .infinity)
    }

    /// The store is read again at the next use: another process may have signed in, signed out
    /// or renewed since (a long-running agent beside the window). Nothing changes while this
    /// session holds something newer than the store: a refresh under way, or a renewed token it
    /// could not save.
    public func rereadStoreAtNextUse() {
        guard loaded, refreshing == nil, storageProblem == nil else { return }
        loaded = false
        loading = nil
    }

    /// The provider refused `rejected` (HTTP 401). Refreshes it, unless another
    /// caller already replaced it, in which case that newer token is the answer.
    public func replacement(forRejected rejected: Token) async throws -> Token {
        guard let current = await currentToken() else {
            throw OAuthError.signedOut(reason: "You are not signed in to \(configuration.displayName).")
        }
        if current.accessToken != rejected.accessToken { return current }
        return try await refresh(from: current, margin: renewalMargin(for: current))
    }

    /// The provider refused even a fresh token, `rejected`: the sign-in is over —
    /// unless it has been replaced meanwhile (a new sign-in), which stays.
    public func endAfterRejection(of rejected: Token) async -> OAuthError {
        if token?.accessToken == rejected.accessToken { await forget() }
        return .signedOut(reason: "\(configuration.displayName) no longer accepts your sign-in. Sign in again.")
    }

    /// Forgets the tokens here first, so the app is signed out at once, then
    /// revokes them where the provider offers it. Returns a warning when
    /// revocation failed or the stored sign-in was damaged (the local sign-out
    /// stands either way).
    @discardableResult
    public func signOut() async -> String? {
        _ = await currentToken()
        // Before any further await: a refresh answering from now on is revoked, not kept.
        generation += 1
        let mine = generation
        let damage = storeWarning
        // Every copy the store holds (the keyring's, and a file's made while the
        // keyring did not answer), not only the one in use: each is a live grant.
        // Only those made with this setup (or with it before the resource was part of the binding)
        // are sent to its revocation endpoint: that is where they were issued.
        var revocable = ((try? await inOrder { store, id in try await store.allTokens(for: id) }) ?? [])
            .filter { [configuration.tokenBinding, configuration.earlierTokenBinding].contains($0.issuedBy ?? "") }
        // The one in use now (a refresh may have renewed it while the store answered).
        if let token, !revocable.contains(token) { revocable.insert(token, at: 0) }
        // A sign-in asked for while the store answered is not undone.
        let removal = generation == mine ? await forget() : nil
        // A damaged store was set aside, not deleted: say so, or the person never learns it.
        if revocable.isEmpty, let damage { return "Signed out. \(damage)" }
        // Revoked whether or not the store could be cleared: a copy left behind
        // is then at least dead at the provider.
        var refusal: (any Error)?
        if configuration.revocationEndpoint != nil {
            for stored in revocable {
                do { try await tokenClient.revoke(stored) } catch {
                    logger.notice("Revocation failed", metadata: ["error": "\(error)"])
                    refusal = refusal ?? error
                }
            }
        }
        if let removal { return "Signed out here, but \(removal)" }
        if let refusal { return "Signed out here, but \(configuration.displayName) could not be told: \(refusal)" }
        return nil
    }

    /// One refresh at a time; `margin`: how long a token another process renewed meanwhile must still be good for to count.
    private func refresh(from token: Token, margin: TimeInterval) async throws -> Token {
        try await renewal(from: token, margin: margin).value
    }

    /// The renewal under way, or a new one: it clears itself from `refreshing` as it ends.
    private func renewal(from token: Token?, margin: TimeInterval) -> Task<Token, any Error> {
        if let refreshing { return refreshing }
        let task = inTurn { try await self.performRefreshThenClear(from: token, margin: margin) }
        refreshing = task
        return task
    }

    private func performRefreshThenClear(from token: Token?, margin: TimeInterval) async throws -> Token {
        defer { refreshing = nil }
        return try await performRefresh(from: token, margin: margin)
    }

    private func performRefresh(from held: Token?, margin: TimeInterval) async throws -> Token {
        // One refresh per provider across processes: a second instance of the
        // program (or a command signing out) holding the same refresh token must not replay
        // it, which a provider with reuse detection answers by revoking the grant.
        let started = generation
        let lock = try await refreshLock()
        defer { lock?.release() }
        if let current = try superseded(since: started) { return current }
        // Minted anew, unless the held token came of a sign-in (the server's own, where the identity provider refused).
        if configuration.grant.mints, held?.canRefresh != true { return try await renewMinted(held, margin: margin, started: started) }
        guard let held else { throw OAuthError.signedOut(reason: "You are not signed in to \(configuration.displayName).") }
        // From what is held now: a narrower token's refresh before this one may have rotated the refresh token.
        let token = try await rereadBeforeRefreshing(self.token ?? held, started: started)
        if let current = try superseded(since: started) { return current }
        if token.accessToken != held.accessToken, margin == .infinity || !token.expires(within: margin, now: now()) { return token }
        guard token.canRefresh else {
            let reason = "Your sign-in at \(configuration.displayName) has expired and cannot be renewed. Sign in again."
            ended = Ended(reason: reason, at: now())
            await forget()
            throw OAuthError.signedOut(reason: reason)
        }
        let fresh: Token
        do {
            fresh = try await tokenClient.refresh(token, now: now())
        } catch OAuthError.invalidGrant {
            // Refused after a sign-out or a new sign-in: that grant is not this one.
            if let current = try superseded(since: started) { return current }
            let reason = "\(configuration.displayName) no longer accepts your sign-in (it may have been revoked or expired). Sign in again."
            ended = Ended(reason: reason, at: now())
            await forget()
            throw OAuthError.signedOut(reason: reason)
        } catch {
            // Network trouble, a server error, a misconfiguration: the grant may be fine. Keep it.
            logger.notice("Refresh failed; keeping the stored token", metadata: ["error": "\(error)"])
            throw error
        }
        if generation != started {
            // Signed out, or signed in afresh, while the provider answered: this
            // token must not outlive that, nor replace the new sign-in.
            try? await tokenClient.revoke(fresh)
            if let current = try superseded(since: started) { return current }
        }
        await adopt(fresh)
        return fresh
    }

    /// The provider may have rotated the refresh token: from here the old one is dead (or,
    /// replayed, revokes the grant). The new one is adopted before anything can fail, then
    /// saved; a save that fails loses nothing in this process.
    func adopt(_ fresh: Token) async {
        self.token = fresh
        logger.info("Access token refreshed", metadata: ["token": "\(fresh)"])
        do {
            if let notice = try await inOrder({ store, id in try await store.save(fresh, for: id) }) {
                logger.notice("The renewed sign-in was kept elsewhere", metadata: ["notice": "\(notice)"])
            }
            storageProblem = nil
        } catch {
            storageProblem =
                "The renewed sign-in could not be saved (\(error)); it is kept while this program runs, and saved at the next chance."
            logger.warning("Could not save the refreshed token; keeping it in memory", metadata: ["error": "\(error)"])
        }
    }

    /// What another process left in the store, when it differs from what this
    /// one holds: a token it renewed (take it), or nothing (it signed out).
    func rereadBeforeRefreshing(_ held: Token, started: Int) async throws -> Token {
        // A token that only lives here (its save failed) has nothing newer in the store.
        guard storageProblem == nil else { return held }
        let stored: Token?
        do { stored = try await inOrder { store, id in try await store.load(for: id) } } catch {
            return try heldWhileStoreUnread(held, error)
        }
        // Signed in or out while the store answered: what it said is out of date (the caller checks).
        guard generation == started else { return held }
        guard let stored else {
            // Signed out elsewhere — or a keyring that could not be asked just now.
            // Either way nothing is refreshed, and nothing is removed: a store
            // that only seemed empty still holds the sign-in at the next launch.
            token = nil
            throw OAuthError.signedOut(reason: "You signed out of \(configuration.displayName) elsewhere. Sign in again.")
        }
        // Only a newer one: an older copy's refresh token may already be rotated away.
        guard stored != held, stored.issuedBy == configuration.tokenBinding, stored.receivedAt >= held.receivedAt
        else { return held }
        logger.debug("Another process renewed the sign-in; using its token")
        token = stored
        return stored
    }

    /// When a sign-in or sign-out came since `started`, what a refresh that
    /// began before it answers instead of its own result: the sign-in now in
    /// use, or "signed out". Nil when nothing came between.
    func superseded(since started: Int) throws -> Token? {
        guard generation != started else { return nil }
        if let token { return token }
        throw OAuthError.signedOut(reason: "You signed out of \(configuration.displayName).")
    }

    /// Runs a call on the store, for this account, after every one asked for before it.
    func inOrder<T: Sendable>(
        _ call: @escaping @Sendable (_ store: any TokenStore, _ provider: String) async throws -> T
    ) async throws -> T {
        let (previous, store, provider) = (lastStoreCall, store, accountKey)
        let task = Task<T, any Error> {
            await previous?.value
            return try await call(store, provider)
        }
        lastStoreCall = Task { _ = try? await task.value }
        return try await task.value
    }

    /// Forgets the token here and in the store; a sentence when the store could not be cleared.
    @discardableResult
    private func forget() async -> String? {
        token = nil
        loaded = true
        generation += 1
        do {
            try await inOrder { store, id in try await store.remove(for: id) }
            return nil
        } catch {
            logger.warning("Could not remove the stored token", metadata: ["error": "\(error)"])
            return "\(error)"
        }
    }
}
