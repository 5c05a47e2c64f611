import CGtk
import CSecret
import Foundation
import GtkKit
import OAuthCore

/// Tokens in the desktop's keyring (the Secret Service, e.g. GNOME Keyring),
/// through libsecret. One item per provider, with the attributes
/// `application=latchkey` and `provider=<id>`, so `secret-tool lookup
/// application latchkey provider sandbox` finds it.
///
/// A locked keyring asks for its password in a prompt of its own, and a prompt
/// nobody answers holds a call for good. So every call runs on a thread of its
/// own and is waited for at most `timeout` seconds; past that the store gives
/// up waiting with a sentence, and the call may still finish when the person
/// answers the prompt (the next load then finds the sign-in in both places and
/// keeps one). The call is not cancelled: cancelling an unlock prompt makes
/// gnome-keyring 42 abort (an assertion in its unlock prompt), and libsecret then
/// never returns at all.
///
/// Sendable: `schema` is immutable once made, and `outstanding` is read and
/// written only under `busy`.
public final class SecretServiceTokenStore: TokenStore, @unchecked Sendable {
    private let schema: UnsafeMutablePointer<SecretSchema>
    /// Seconds a call may take, an unlock prompt included.
    public let timeout: Double
    /// Set while a call runs, including one given up on whose prompt is still
    /// open. One call at a time: a save given up on and finished late must not
    /// land after, and over, a newer one — so while one is outstanding, the
    /// next fails at once (its tokens go to the file) instead of queueing.
    private let busy = NSLock()
    private var outstanding = false

    public init(timeout: Double = 60) {
        self.timeout = timeout
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        // A NULL value is SECRET_SCHEMA_ATTRIBUTE_STRING (0).
        g_hash_table_insert(types, g_strdup("application"), nil)
        g_hash_table_insert(types, g_strdup("provider"), nil)
        // DONT_MATCH_NAME: gnome-keyring matches no locked item on the schema's
        // name, so a lookup would answer "nothing" instead of offering to unlock.
        schema = secret_schema_newv("io.github.latchkey.Token", SECRET_SCHEMA_DONT_MATCH_NAME, types)
        g_hash_table_unref(types)
    }

    deinit { secret_schema_unref(schema) }

    public var displayName: String { "the keyring" }

    /// Proves libsecret linked: its schema type registers with GObject.
    public static var schemaTypeName: String { String(cString: g_type_name(secret_schema_get_type())) }

    /// Whether a Secret Service runs on the session bus now (asked without
    /// starting one), asked on a thread of its own: a D-Bus round trip blocks.
    public static func isServiceRunning() async -> Bool {
        await BlockingWork.run { SessionBus.hasOwner("org.freedesktop.secrets") }
    }

    public func load(for provider: String) async throws -> Token? {
        let json: String? = try await call("read", provider) { schema, attributes, error in
            guard let secret = secret_password_lookupv_sync(schema, attributes, nil, &error) else { return nil }
            defer { secret_password_free(secret) }
            return String(cString: secret)
        }
        guard let json else { return nil }
        do {
            return try JSONDecoder().decode(Token.self, from: Data(json.utf8))
        } catch {
            throw OAuthError.storage("the saved sign-in in the keyring could not be read. Sign in again to replace it.")
        }
    }

    @discardableResult
    public func save(_ token: Token, for provider: String) async throws -> String? {
        let json = String(decoding: try JSONEncoder().encode(token), as: UTF8.self)
        let label = "Latchkey sign-in (\(provider))"
        let stored: Bool = try await call("write to", provider) { schema, attributes, error in
            secret_password_storev_sync(schema, attributes, "default", label, json, nil, &error) != 0
        }
        guard stored else { throw OAuthError.storage("the keyring stayed locked, so it did not keep the sign-in.") }
        return nil
    }

    public func remove(for provider: String) async throws {
        let _: Bool = try await call("clear", provider) { schema, attributes, error in
            secret_password_clearv_sync(schema, attributes, nil, &error) != 0
        }
    }

    /// Runs one libsecret call on a thread of its own and waits (suspended, not
    /// blocking a thread) at most `timeout` seconds for it; its GError becomes a sentence.
    private func call<T: Sendable>(
        _ verb: String, _ provider: String,
        _ body: @escaping @Sendable (UnsafeMutablePointer<SecretSchema>, OpaquePointer?, inout UnsafeMutablePointer<GError>?) -> T
    ) async throws -> T {
        let claimed = busy.withLock { () -> Bool in
            if outstanding { return false }
            outstanding = true
            return true
        }
        guard claimed else {
            throw OAuthError.storage("the keyring is still waiting for an answer to its password prompt.")
        }
        // The thread holds the store (and so its schema) until the call returns, however late.
        let outcome = await BlockingWork.run(waitingAtMost: timeout) { [self] () -> (T, String?) in
            var error: UnsafeMutablePointer<GError>?
            let value = withAttributes(provider) { body(schema, $0, &error) }
            let message = error.map { error in
                defer { g_error_free(error) }
                return String(cString: error.pointee.message)
            }
            // Free before waking the caller, whose next call may follow at once.
            busy.withLock { outstanding = false }
            return (value, message)
        }
        guard let (value, message) = outcome else {
            throw OAuthError.storage(
                "the keyring did not answer within \(Int(timeout)) s (it may be locked, waiting for its password).")
        }
        if let message { throw OAuthError.storage("could not \(verb) the keyring (\(message)).") }
        return value
    }

    private func withAttributes<T>(_ provider: String, _ body: (OpaquePointer?) -> T) -> T {
        let attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        g_hash_table_insert(attributes, g_strdup("application"), g_strdup("latchkey"))
        g_hash_table_insert(attributes, g_strdup("provider"), g_strdup(provider))
        defer { g_hash_table_unref(attributes) }
        return body(attributes)
    }
}
