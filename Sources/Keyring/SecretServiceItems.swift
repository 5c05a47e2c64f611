import CGio
import CSecret
import FoundationEssentials
import OAuthCore
import Synchronization

/// Items of one kind in the desktop's keyring (the Secret Service, e.g. GNOME
/// Keyring), through libsecret: each is found by `application=latchkey` and
/// one key attribute (`provider=<id>` for sign-ins, `client=<id>` for client
/// secrets), so the kinds never match each other's searches.
///
/// A locked keyring asks for its password in a prompt of its own, and a prompt
/// nobody answers holds a call for good. So every call runs on a thread of its
/// own and is waited for at most `timeout` seconds; past that the caller gets a
/// sentence, and the call may still finish when the person answers the prompt.
/// The call is not cancelled: cancelling an unlock prompt makes gnome-keyring 42
/// abort (an assertion in its unlock prompt), and libsecret then never returns.
/// A keyring daemon that was replaced is reached anew (`call`).
///
/// Sendable: `schema` and `key` are immutable once made, and `outstanding` is
/// read and written only under `busy`.
final class SecretServiceItems: @unchecked Sendable {
    private let schema: UnsafeMutablePointer<SecretSchema>
    private let key: String
    let timeout: Double
    /// Set while a call runs, including one given up on whose prompt is still
    /// open. One call at a time: a write given up on and finished late must not
    /// land after, and over, a newer one — so while one is outstanding, the
    /// next fails at once instead of queueing.
    private let outstanding = Mutex(false)

    init(schemaName: String, key: String, timeout: Double) {
        self.key = key
        self.timeout = timeout
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        // A NULL value is SECRET_SCHEMA_ATTRIBUTE_STRING (0).
        g_hash_table_insert(types, g_strdup("application"), nil)
        g_hash_table_insert(types, g_strdup(key), nil)
        // DONT_MATCH_NAME: gnome-keyring matches no locked item on the schema's
        // name, so a lookup would answer "nothing" instead of offering to unlock.
        schema = secret_schema_newv(schemaName, SECRET_SCHEMA_DONT_MATCH_NAME, types)
        g_hash_table_unref(types)
    }

    deinit { secret_schema_unref(schema) }

    /// The item's text for `id`; nil when there is none.
    func lookup(_ id: String) async throws -> String? {
        try await call("read", id) { schema, attributes, error in
            guard let secret = secret_password_lookupv_sync(schema, attributes, nil, &error) else { return nil }
            defer { secret_password_free(secret) }
            return String(cString: secret)
        }
    }

    /// Stores `text` as the item for `id`, replacing the old one; false when the keyring stayed locked.
    func store(_ text: String, for id: String, label: String) async throws -> Bool {
        try await call("write to", id) { schema, attributes, error in
            secret_password_storev_sync(schema, attributes, "default", label, text, nil, &error) != 0
        }
    }

    func clear(_ id: String) async throws {
        let _: Bool = try await call("clear", id) { schema, attributes, error in
            secret_password_clearv_sync(schema, attributes, nil, &error) != 0
        }
    }

    /// Runs one libsecret call on a thread of its own and waits (suspended, not
    /// blocking a thread) at most `timeout` seconds for it; its GError becomes a sentence.
    private func call<T: Sendable>(
        _ verb: String, _ id: String,
        _ body: @escaping @Sendable (UnsafeMutablePointer<SecretSchema>, OpaquePointer?, inout UnsafeMutablePointer<GError>?) -> T
    ) async throws -> T {
        let claimed = outstanding.withLock { outstanding -> Bool in
            if outstanding { return false }
            outstanding = true
            return true
        }
        guard claimed else {
            throw OAuthError.storage("the keyring is still waiting for an answer to its password prompt.")
        }
        // The thread holds the items (and so the schema) until the call returns, however late.
        let outcome = await BlockingWork.run(waitingAtMost: timeout) { [self] () -> (T, String?) in
            var error: UnsafeMutablePointer<GError>?
            var value = withAttributes(id) { body(schema, $0, &error) }
            if let failed = error, failed.pointee.domain == g_dbus_error_quark(), Self.daemonGone.contains(failed.pointee.code) {
                // The keyring daemon went away since libsecret first reached it (replaced, restarted at a new
                // login): libsecret keeps calling the old one's unique name, for good. Its connection is
                // dropped, and the call made once more, to whichever daemon serves now.
                g_error_free(failed)
                error = nil
                secret_service_disconnect()
                value = withAttributes(id) { body(schema, $0, &error) }
            }
            let message = error.map { error in
                defer { g_error_free(error) }
                return String(cString: error.pointee.message)
            }
            // Free before waking the caller, whose next call may follow at once.
            outstanding.withLock { $0 = false }
            return (value, message)
        }
        guard let (value, message) = outcome else {
            throw OAuthError.storage(
                "the keyring did not answer within \(Int(timeout)) s (it may be locked, waiting for its password).")
        }
        if let message { throw OAuthError.storage("could not \(verb) the keyring (\(message)).") }
        return value
    }

    /// D-Bus errors that say the daemon libsecret reached is gone (not that it was slow: a NoReply
    /// may have been carried out, and a second try only doubles the wait).
    private static let daemonGone: Set<Int32> = [
        Int32(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue), Int32(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue),
        Int32(G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue), Int32(G_DBUS_ERROR_UNKNOWN_METHOD.rawValue),
        Int32(G_DBUS_ERROR_DISCONNECTED.rawValue),
    ]

    private func withAttributes<T>(_ id: String, _ body: (OpaquePointer?) -> T) -> T {
        let attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        g_hash_table_insert(attributes, g_strdup("application"), g_strdup("latchkey"))
        g_hash_table_insert(attributes, g_strdup(key), g_strdup(id))
        defer { g_hash_table_unref(attributes) }
        return body(attributes)
    }
}

/// Client secrets the person typed into the set-up dialog, in the keyring:
/// `secret-tool lookup application latchkey client github` reads one.
public final class SecretServiceClientSecretStore: ClientSecretStore, Sendable {
    private let items: SecretServiceItems

    public init(timeout: Double = 60) {
        items = SecretServiceItems(schemaName: "io.github.latchkey.ClientSecret", key: "client", timeout: timeout)
    }

    public var displayName: String { "the keyring" }

    public func load(for provider: String) async throws -> String? {
        try await items.lookup(provider).flatMap { $0.isEmpty ? nil : $0 }
    }

    @discardableResult
    public func save(_ secret: String, for provider: String) async throws -> String {
        guard try await items.store(secret, for: provider, label: "Latchkey client secret (\(provider))") else {
            throw OAuthError.storage("the keyring stayed locked, so it did not keep the client secret.")
        }
        return displayName
    }

    public func remove(for provider: String) async throws {
        try await items.clear(provider)
    }
}
