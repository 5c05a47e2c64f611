import FoundationEssentials

extension AuthSession {
    /// A client's own token (`ProviderConfiguration.Grant.clientCredentials`), under the refresh lock:
    /// one another process got meanwhile and that lasts `margin` more, else the grant asked again. Kept
    /// as a sign-in's token is, so that the agent and `latchkey token` share it rather than each
    /// asking the server.
    func renewClientToken(_ held: Token?, margin: TimeInterval, started: Int) async throws -> Token {
        if let stored = try? await inOrder({ store, id in try await store.load(for: id) }), generation == started,
            stored.issuedBy == configuration.tokenBinding, stored.accessToken != held?.accessToken,
            margin != .infinity, !stored.expires(within: margin, now: now())
        {
            token = stored
            return stored
        }
        let fresh = try await tokenClient.clientCredentials(now: now())
        if generation != started, let current = try superseded(since: started) { return current }
        await adopt(fresh)
        return fresh
    }
}
