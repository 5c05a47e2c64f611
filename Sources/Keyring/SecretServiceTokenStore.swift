import CGio
import CSecret
import FoundationEssentials
import GioKit
import OAuthCore

/// Tokens in the desktop's keyring (the Secret Service, e.g. GNOME Keyring),
/// through libsecret. One item per provider, with the attributes
/// `application=latchkey` and `provider=<id>`, so `secret-tool lookup
/// application latchkey provider sandbox` finds it.
///
/// A call waits at most `timeout` seconds for a locked keyring's prompt (see
/// `SecretServiceItems`); one given up on may still finish when the person
/// answers, and the next load then finds the sign-in in both places and keeps one.
/// While one is outstanding the next fails at once, and its tokens go to the file.
public final class SecretServiceTokenStore: TokenStore, Sendable {
    private let items: SecretServiceItems
    /// Seconds a call may take, an unlock prompt included.
    public var timeout: Double { items.timeout }

    public init(timeout: Double = 60) {
        items = SecretServiceItems(schemaName: "io.github.latchkey.Token", key: "provider", timeout: timeout)
    }

    public var displayName: String { "the keyring" }

    /// Proves libsecret opens: its schema type registers with GObject. Opening it is otherwise left to
    /// the first call on a keyring.
    public static func schemaTypeName() throws -> String { try SecretServiceItems.schemaTypeName() }

    /// Whether a Secret Service runs on the session bus now (asked without
    /// starting one), asked on a thread of its own: a D-Bus round trip blocks.
    public static func isServiceRunning() async -> Bool {
        await BlockingWork.run { SessionBus.hasOwner("org.freedesktop.secrets") }
    }

    public func load(for provider: String) async throws -> Token? {
        guard let json = try await items.lookup(provider) else { return nil }
        do {
            return try JSONDecoder().decode(Token.self, from: Data(json.utf8))
        } catch {
            throw OAuthError.storage("the saved sign-in in the keyring could not be read. Sign in again to replace it.")
        }
    }

    @discardableResult
    public func save(_ token: Token, for provider: String) async throws -> String? {
        let json = String(decoding: try JSONEncoder().encode(token), as: UTF8.self)
        guard try await items.store(json, for: provider, label: "Latchkey sign-in (\(provider))") else {
            throw OAuthError.storage("the keyring stayed locked, so it did not keep the sign-in.")
        }
        return nil
    }

    public func remove(for provider: String) async throws {
        try await items.clear(provider)
    }
}
