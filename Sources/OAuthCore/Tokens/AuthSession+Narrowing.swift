import FoundationEssentials

/// The narrower tokens one sign-in gave programs, each kept until it is due for renewal, and those
/// being made: one per narrowing, however many programs ask for it at once.
struct NarrowedTokens {
    /// Each with the sign-in (`AuthSession.generation`) it came from: none outlives a sign-out.
    var kept: [Narrowing: (generation: Int, token: Token)] = [:]
    var making: [Narrowing: Task<Token, any Error>] = [:]
    /// The most kept at once.
    static let most = 64
}

extension AuthSession {
    /// A token for `narrowing` alone, good for at least `seconds` more (and never less than its renewal
    /// margin), never kept in place of the sign-in's own:
    /// - by RFC 8693 token exchange of the sign-in's access token, where the provider offers it;
    /// - by a refresh naming the scopes and resource, in turn with the sign-in's renewals;
    /// - not at all where the provider gives its tokens whole (`NarrowingMethod.none`): the caller
    ///   decides whether the whole token will do.
    /// A provider that answers with more than was asked is refused: a program is never handed more
    /// than it was allowed in the belief that it was less.
    /// `renewing`: made anew whatever the one held has left (a program whose token was refused).
    public func narrowedToken(_ narrowing: Narrowing, validFor seconds: TimeInterval = 0, renewing: Bool = false) async throws -> Token {
        // Only while signed in: the store read again (another process may have signed out) says so.
        guard await currentToken() != nil || configuration.grant.mints else {
            throw OAuthError.signedOut(reason: "You are not signed in to \(configuration.displayName).")
        }
        if renewing { narrowed.kept[narrowing] = nil }
        if let (made, token) = narrowed.kept[narrowing], made == generation,
            !token.expires(within: max(seconds, renewalMargin(for: token)), now: now()), await servable(token)
        {
            return token
        }
        if let making = narrowed.making[narrowing] { return try await making.value }
        let task = Task { try await self.makeAndKeep(narrowing) }
        narrowed.making[narrowing] = task
        defer { narrowed.making[narrowing] = nil }
        return try await task.value
    }

    /// Made, and kept for the next callers, unless a sign-in or sign-out came meanwhile (then nobody,
    /// not even those who joined, gets it).
    private func makeAndKeep(_ narrowing: Narrowing) async throws -> Token {
        let started = generation
        let token = try await makeNarrowed(narrowing)
        guard generation == started else {
            throw OAuthError.signedOut(reason: "You signed in or out of \(configuration.displayName) meanwhile. Ask again.")
        }
        // Only narrowings still in use are kept: one a program stopped asking for goes at its expiry, and
        // past 64 (a program asking for ever new ones) the kept ones go.
        narrowed.kept = narrowed.kept.filter { !$0.value.token.expires(within: 0, now: now()) }
        if narrowed.kept.count >= NarrowedTokens.most { narrowed.kept.removeAll() }
        narrowed.kept[narrowing] = (started, token)
        return token
    }

    private func makeNarrowed(_ narrowing: Narrowing) async throws -> Token {
        let token: Token
        switch configuration.narrowing {
        case _ where configuration.grant.mints:
            // The grant itself, naming the scopes and resource: tokens had with nobody involved are narrowed at the source.
            do { token = try await mint(narrowing) } catch { throw refusedNarrowing(error) }
        case .none:
            throw OAuthError.narrowing("\(configuration.displayName) gives its tokens whole; it cannot narrow one.")
        case .tokenExchange:
            let subject = try await freshToken()
            do { token = try await tokenClient.exchange(subject, for: narrowing, now: now()) } catch { throw refusedNarrowing(error) }
        case .refresh:
            guard let held = await currentToken() else {
                throw OAuthError.signedOut(reason: "You are not signed in to \(configuration.displayName).")
            }
            token = try await inTurn { try await self.refreshNarrowed(from: held, narrowing) }.value
        }
        let given = token.allowedScopes(asked: narrowing.scopes)
        guard narrowing.scopes.isEmpty || Set(given).isSubset(of: narrowing.scopes) else {
            throw OAuthError.narrowing(
                "\(configuration.displayName) answered a request for \(narrowing.scopes.joined(separator: " ")) with a token for \(given.joined(separator: " ")). It cannot narrow tokens: say so in its provider file (\"narrowing\": \"none\"), and programs are asked for the whole token."
            )
        }
        return token
    }

    /// Runs `body` after every refresh asked for before it: a narrowing and a renewal never send the same refresh token.
    func inTurn<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Task<T, any Error> {
        let previous = refreshTurn
        let task = Task<T, any Error> {
            await previous?.value
            return try await body()
        }
        refreshTurn = Task { _ = try? await task.value }
        return task
    }

    /// A refresh for `narrowing`: the sign-in keeps its access token, and takes the refresh token the
    /// provider rotated to. A refusal is not the end of the sign-in (a provider may refuse one resource
    /// with `invalid_grant`): the sign-in is left to its next renewal, which tells.
    private func refreshNarrowed(from held: Token, _ narrowing: Narrowing) async throws -> Token {
        let started = generation
        let lock = try await refreshLock()
        defer { lock?.release() }
        let token = try await rereadBeforeRefreshing(self.token ?? held, started: started)
        guard generation == started, self.token != nil else {
            throw OAuthError.signedOut(reason: "You signed in or out of \(configuration.displayName) meanwhile. Ask again.")
        }
        guard token.canRefresh else {
            throw OAuthError.narrowing(
                "Your sign-in at \(configuration.displayName) cannot be renewed, so no narrower token can be had from it.")
        }
        let answer: (narrowed: Token, refreshToken: String?, refreshExpiresAt: Date?)
        do { answer = try await tokenClient.refresh(token, narrowedTo: narrowing, now: now()) } catch { throw refusedNarrowing(error) }
        guard generation == started else {
            // Signed out, or in afresh, while the provider answered: what it gave must not outlive that.
            var given = answer.narrowed
            given.refreshToken = answer.refreshToken
            try? await tokenClient.revoke(given)
            throw OAuthError.signedOut(reason: "You signed in or out of \(configuration.displayName) meanwhile. Ask again.")
        }
        if let rotated = answer.refreshToken, rotated != token.refreshToken {
            var kept = token
            kept.refreshToken = rotated
            kept.refreshExpiresAt = answer.refreshExpiresAt
            await adopt(kept)
        }
        return answer.narrowed
    }

    /// The provider's refusal of a narrower token, said as that: never a sign-out.
    private func refusedNarrowing(_ error: any Error) -> any Error {
        guard let error = error as? OAuthError else { return error }
        switch error {
        case .invalidGrant(let description), .tokenEndpoint(_, let description):
            return OAuthError.narrowing(
                "\(configuration.displayName) would not give a narrower token" + (description.map { ": \($0)" } ?? "."))
        default:
            return error
        }
    }
}
