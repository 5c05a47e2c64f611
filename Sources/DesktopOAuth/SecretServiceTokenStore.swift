import CGtk
import CSecret
import Foundation
import OAuthCore

/// Tokens in the desktop's keyring (the Secret Service, e.g. GNOME Keyring),
/// through libsecret. One item per provider, with the attributes
/// `application=latchkey` and `provider=<id>`, so `secret-tool lookup
/// application latchkey provider sandbox` finds it.
public final class SecretServiceTokenStore: TokenStore, @unchecked Sendable {
    private let schema: UnsafeMutablePointer<SecretSchema>

    public init() {
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        // A NULL value is SECRET_SCHEMA_ATTRIBUTE_STRING (0).
        g_hash_table_insert(types, g_strdup("application"), nil)
        g_hash_table_insert(types, g_strdup("provider"), nil)
        schema = secret_schema_newv("io.github.latchkey.Token", SECRET_SCHEMA_NONE, types)
        g_hash_table_unref(types)
    }

    deinit { secret_schema_unref(schema) }

    public var displayName: String { "the keyring" }

    /// Proves libsecret linked: its schema type registers with GObject.
    public static var schemaTypeName: String { String(cString: g_type_name(secret_schema_get_type())) }

    /// Whether a Secret Service already runs on the session bus. Asked without
    /// D-Bus activation: starting a keyring daemon on a machine that has none
    /// would prompt, or hang, rather than fall back to the file store.
    public static func isServiceRunning() -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            if let error { g_error_free(error) }
            return false
        }
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        var name: OpaquePointer? = g_variant_new_string("org.freedesktop.secrets")
        let parameters = g_variant_new_tuple(&name, 1)
        guard
            let reply = g_dbus_connection_call_sync(
                bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", parameters,
                nil, G_DBUS_CALL_FLAGS_NONE, 2000, nil, &error)
        else {
            if let error { g_error_free(error) }
            return false
        }
        defer { g_variant_unref(reply) }
        let answer = g_variant_get_child_value(reply, 0)
        defer { g_variant_unref(answer) }
        return g_variant_get_boolean(answer) != 0
    }

    public func load(for provider: String) throws -> Token? {
        var error: UnsafeMutablePointer<GError>?
        let secret = withAttributes(provider) { secret_password_lookupv_sync(schema, $0, nil, &error) }
        if let error { throw Self.failure("read", error) }
        guard let secret else { return nil }
        defer { secret_password_free(secret) }
        do {
            return try JSONDecoder().decode(Token.self, from: Data(String(cString: secret).utf8))
        } catch {
            throw OAuthError.storage("the saved sign-in in the keyring could not be read. Sign in again to replace it.")
        }
    }

    public func save(_ token: Token, for provider: String) throws {
        let json = String(decoding: try JSONEncoder().encode(token), as: UTF8.self)
        var error: UnsafeMutablePointer<GError>?
        let stored = withAttributes(provider) {
            secret_password_storev_sync(schema, $0, "default", "Latchkey sign-in (\(provider))", json, nil, &error)
        }
        if let error { throw Self.failure("write to", error) }
        guard stored != 0 else { throw OAuthError.storage("the keyring did not keep the sign-in.") }
    }

    public func remove(for provider: String) throws {
        var error: UnsafeMutablePointer<GError>?
        _ = withAttributes(provider) { secret_password_clearv_sync(schema, $0, nil, &error) }
        if let error { throw Self.failure("clear", error) }
    }

    private func withAttributes<T>(_ provider: String, _ body: (OpaquePointer?) -> T) -> T {
        let attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        g_hash_table_insert(attributes, g_strdup("application"), g_strdup("latchkey"))
        g_hash_table_insert(attributes, g_strdup("provider"), g_strdup(provider))
        defer { g_hash_table_unref(attributes) }
        return body(attributes)
    }

    private static func failure(_ verb: String, _ error: UnsafeMutablePointer<GError>) -> OAuthError {
        let message = String(cString: error.pointee.message)
        g_error_free(error)
        return .storage("could not \(verb) the keyring (\(message)).")
    }
}
