/// Where tokens are kept between launches. One entry per provider id.
///
/// The requirements are async: a store may wait on something slow (a keyring
/// asking for its password), and it does so without holding a thread of the
/// cooperative pool. A store whose work is quick (a file) may meet them with
/// plain synchronous methods.
public protocol TokenStore: Sendable {
    /// Where the tokens live, in words for the status line.
    var displayName: String { get }
    /// The stored token; nil when there is none. Throws `OAuthError.storage`
    /// when an entry exists but cannot be read, after setting it aside.
    func load(for provider: String) async throws -> Token?
    /// Keeps `token`. Returns nil when it went where `displayName` says, or a
    /// sentence saying where it went instead (a keyring that did not answer).
    @discardableResult
    func save(_ token: Token, for provider: String) async throws -> String?
    func remove(for provider: String) async throws
    /// Every token kept for `provider`, wherever this store keeps them: what a
    /// sign-out revokes. One place holds at most one.
    func allTokens(for provider: String) async throws -> [Token]
    /// A lock every process using this store shares, so that one refresh per
    /// provider runs at a time across processes; nil where the store is private
    /// to this process.
    func refreshLock(for provider: String) -> ProcessLock?
    /// What the last save for `provider` was, by any process (where it went, which refresh token),
    /// for a store that keeps such a record beside its lock; nil when unknown.
    func lastSaved(for provider: String) -> SavedMark?
    /// Whether a record of saves is kept for `provider` (see `lastSaved`): with one, no mark means "unknown".
    func keepsSaveRecords(for provider: String) -> Bool
}

extension TokenStore {
    public func allTokens(for provider: String) async throws -> [Token] {
        try await load(for: provider).map { [$0] } ?? []
    }

    public func refreshLock(for provider: String) -> ProcessLock? { nil }

    public func lastSaved(for provider: String) -> SavedMark? { nil }

    public func keepsSaveRecords(for provider: String) -> Bool { false }
}
