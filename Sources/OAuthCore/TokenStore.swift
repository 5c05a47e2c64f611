/// Where tokens are kept between launches. One entry per provider id.
public protocol TokenStore: Sendable {
    /// Where the tokens live, in words for the status line.
    var displayName: String { get }
    /// The stored token; nil when there is none. Throws `OAuthError.storage`
    /// when an entry exists but cannot be read, after setting it aside.
    func load(for provider: String) throws -> Token?
    func save(_ token: Token, for provider: String) throws
    func remove(for provider: String) throws
}
