import FoundationEssentials
import Synchronization

/// Tokens in memory only, for a program that signs in afresh each run.
public final class MemoryTokenStore: TokenStore, Sendable {
    private let tokens = Mutex<[String: Token]>([:])

    public init() {}

    public var displayName: String { "memory (forgotten on exit)" }
    public func load(for provider: String) throws -> Token? { tokens.withLock { $0[provider] } }
    @discardableResult
    public func save(_ token: Token, for provider: String) throws -> String? {
        tokens.withLock { $0[provider] = token }
        return nil
    }
    public func remove(for provider: String) throws { _ = tokens.withLock { $0.removeValue(forKey: provider) } }
}
