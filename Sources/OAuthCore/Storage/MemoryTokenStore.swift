import Foundation

/// Tokens in memory only, for a program that signs in afresh each run.
/// Sendable: `tokens` is read and written only under `lock`.
public final class MemoryTokenStore: TokenStore, @unchecked Sendable {
    private let lock = NSLock()
    private var tokens: [String: Token] = [:]

    public init() {}

    public var displayName: String { "memory (forgotten on exit)" }
    public func load(for provider: String) throws -> Token? { lock.withLock { tokens[provider] } }
    @discardableResult
    public func save(_ token: Token, for provider: String) throws -> String? {
        lock.withLock { tokens[provider] = token }
        return nil
    }
    public func remove(for provider: String) throws { _ = lock.withLock { tokens.removeValue(forKey: provider) } }
}
