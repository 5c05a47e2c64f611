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
/// libsecret itself is opened by the first call (`CSecret`): where no Secret Service runs, nothing
/// here is ever called, and the library is never loaded.
///
/// Sendable: `schemaName` and `key` are immutable, and `outstanding` is a `Mutex`.
final class SecretServiceItems: Sendable {
    private let schemaName: String
    private let key: String
    let timeout: Double
    /// Set while a call runs, including one given up on whose prompt is still
    /// open. One call at a time: a write given up on and finished late must not
    /// land after, and over, a newer one — so while one is outstanding, the
    /// next fails at once instead of queueing.
    private let outstanding = Mutex(false)

    init(schemaName: String, key: String, timeout: Double) {
        self.schemaName = schemaName
        self.key = key
        self.timeout = timeout
    }

    /// The item's text for `id`; nil when there is none.
    func lookup(_ id: String) async throws -> String? {
        try await call("read", id) { schema, attributes, error in
            guard let secret = csecret_password_lookupv_sync(schema, attributes, nil, &error) else { return nil }
            defer { csecret_password_free(secret) }
            return String(cString: secret)
        }
    }

    /// Stores `text` as the item for `id`, replacing the old one; false when the keyring stayed locked.
    func store(_ text: String, for id: String, label: String) async throws -> Bool {
        try await call("write to", id) { schema, attributes, error in
            csecret_password_storev_sync(schema, attributes, "default", label, text, nil, &error) != 0
        }
    }

    func clear(_ id: String) async throws {
        let _: Bool = try await call("clear", id) { schema, attributes, error in
            csecret_password_clearv_sync(schema, attributes, nil, &error) != 0
        }
    }

    /// The GType name of libsecret's schemas, libsecret opened for it; the reason when it cannot be.
    static func schemaTypeName() throws -> String {
        if let failure = load() { throw failure }
        return String(cString: g_type_name(GType(csecret_schema_get_type())))
    }

    /// Opens libsecret (once per process); nil when it is open.
    private static func load() -> OAuthError? {
        var reason = [CChar](repeating: 0, count: 256)
        guard csecret_load(&reason, reason.count) != 0 else { return nil }
        let sentence = reason.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return .storage("the keyring cannot be used: \(sentence)")
    }

    /// The schema of these items, made for one call. DONT_MATCH_NAME: gnome-keyring matches no locked
    /// item on the schema's name, so a lookup would answer "nothing" instead of offering to unlock.
    private func makeSchema() -> UnsafeMutableRawPointer {
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        defer { g_hash_table_unref(types) }
        // A NULL value is SECRET_SCHEMA_ATTRIBUTE_STRING (0).
        g_hash_table_insert(types, g_strdup("application"), nil)
        g_hash_table_insert(types, g_strdup(key), nil)
        return csecret_schema_newv(schemaName, Int32(CSECRET_SCHEMA_DONT_MATCH_NAME), UnsafeMutableRawPointer(types))
    }

    /// Runs one libsecret call on a thread of its own and waits (suspended, not
    /// blocking a thread) at most `timeout` seconds for it; its GError becomes a sentence.
    private func call<T: Sendable>(
        _ verb: String, _ id: String,
        _ body: @escaping @Sendable (UnsafeRawPointer, UnsafeMutableRawPointer?, inout UnsafeMutableRawPointer?) -> T
    ) async throws -> T {
        let claimed = outstanding.withLock { outstanding -> Bool in
            if outstanding { return false }
            outstanding = true
            return true
        }
        guard claimed else {
            throw OAuthError.storage("the keyring is still waiting for an answer to its password prompt.")
        }
        // The thread holds the items until the call returns, however late.
        let outcome = await BlockingWork.run(waitingAtMost: timeout) { [self] () -> Result<T, OAuthError> in
            // Free before waking the caller, whose next call may follow at once.
            defer { outstanding.withLock { $0 = false } }
            if let failure = Self.load() { return .failure(failure) }
            let schema = makeSchema()
            defer { csecret_schema_unref(schema) }
            var error: UnsafeMutableRawPointer?
            var value = withAttributes(id) { body(schema, $0, &error) }
            if let failed = error?.assumingMemoryBound(to: GError.self), failed.pointee.domain == g_dbus_error_quark(),
                Self.daemonGone.contains(failed.pointee.code)
            {
                // The keyring daemon went away since libsecret first reached it (replaced, restarted at a new
                // login): libsecret keeps calling the old one's unique name, for good. Its connection is
                // dropped, and the call made once more, to whichever daemon serves now.
                g_error_free(failed)
                error = nil
                csecret_service_disconnect()
                value = withAttributes(id) { body(schema, $0, &error) }
            }
            if let failed = error?.assumingMemoryBound(to: GError.self) {
                defer { g_error_free(failed) }
                return .failure(.storage("could not \(verb) the keyring (\(String(cString: failed.pointee.message)))."))
            }
            return .success(value)
        }
        guard let outcome else {
            throw OAuthError.storage(
                "the keyring did not answer within \(Int(timeout)) s (it may be locked, waiting for its password).")
        }
        return try outcome.get()
    }

    /// D-Bus errors that say the daemon libsecret reached is gone (not that it was slow: a NoReply
    /// may have been carried out, and a second try only doubles the wait).
    private static let daemonGone: Set<Int32> = [
        Int32(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue), Int32(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue),
        Int32(G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue), Int32(G_DBUS_ERROR_UNKNOWN_METHOD.rawValue),
        Int32(G_DBUS_ERROR_DISCONNECTED.rawValue),
    ]

    private func withAttributes<T>(_ id: String, _ body: (UnsafeMutableRawPointer?) -> T) -> T {
        let attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        g_hash_table_insert(attributes, g_strdup("application"), g_strdup("latchkey"))
        g_hash_table_insert(attributes, g_strdup(key), g_strdup(id))
        defer { g_hash_table_unref(attributes) }
        return body(UnsafeMutableRawPointer(attributes))
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
