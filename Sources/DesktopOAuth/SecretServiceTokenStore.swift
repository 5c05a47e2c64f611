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
/// A locked keyring asks for its password in a prompt of its own, and a
/// prompt nobody answers would hold a call for good: every call has a time
/// limit, after which it is cancelled (libsecret then dismisses the prompt)
/// and fails with a sentence that says so.
public final class SecretServiceTokenStore: TokenStore, @unchecked Sendable {
    private let schema: UnsafeMutablePointer<SecretSchema>
    /// Seconds a call may take, an unlock prompt included.
    public let timeout: Double

    public init(timeout: Double = 60) {
        self.timeout = timeout
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

    /// Whether a Secret Service runs on the session bus now (asked without starting one).
    public static func isServiceRunning() -> Bool { SessionBus.hasOwner("org.freedesktop.secrets") }

    public func load(for provider: String) throws -> Token? {
        var error: UnsafeMutablePointer<GError>?
        let (secret, timedOut) = withTimeLimit { cancellable in
            withAttributes(provider) { secret_password_lookupv_sync(schema, $0, cancellable, &error) }
        }
        if let error { throw failure("read", error, timedOut: timedOut) }
        guard let secret else { return nil }
        defer { secret_password_free(secret) }
        do {
            return try JSONDecoder().decode(Token.self, from: Data(String(cString: secret).utf8))
        } catch {
            throw OAuthError.storage("the saved sign-in in the keyring could not be read. Sign in again to replace it.")
        }
    }

    @discardableResult
    public func save(_ token: Token, for provider: String) throws -> String? {
        let json = String(decoding: try JSONEncoder().encode(token), as: UTF8.self)
        var error: UnsafeMutablePointer<GError>?
        let (stored, timedOut) = withTimeLimit { cancellable in
            withAttributes(provider) {
                secret_password_storev_sync(schema, $0, "default", "Latchkey sign-in (\(provider))", json, cancellable, &error)
            }
        }
        if let error { throw failure("write to", error, timedOut: timedOut) }
        // FALSE without an error: the unlock prompt was dismissed.
        guard stored != 0 else { throw OAuthError.storage("the keyring stayed locked, so it did not keep the sign-in.") }
        return nil
    }

    public func remove(for provider: String) throws {
        var error: UnsafeMutablePointer<GError>?
        let (_, timedOut) = withTimeLimit { cancellable in
            withAttributes(provider) { secret_password_clearv_sync(schema, $0, cancellable, &error) }
        }
        if let error { throw failure("clear", error, timedOut: timedOut) }
    }

    /// Runs a libsecret call with a cancellable that is cancelled after `timeout`
    /// seconds; says whether that happened.
    private func withTimeLimit<T>(_ body: (UnsafeMutablePointer<GCancellable>) -> T) -> (T, timedOut: Bool) {
        let cancellable = Cancellable()
        // The timer keeps the cancellable alive until it fires, even after the call returned.
        let timer = DispatchWorkItem { [cancellable] in cancellable.cancel() }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
        let result = body(cancellable.pointer)
        timer.cancel()
        return (result, cancellable.isCancelled)
    }

    private func withAttributes<T>(_ provider: String, _ body: (OpaquePointer?) -> T) -> T {
        let attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        g_hash_table_insert(attributes, g_strdup("application"), g_strdup("latchkey"))
        g_hash_table_insert(attributes, g_strdup("provider"), g_strdup(provider))
        defer { g_hash_table_unref(attributes) }
        return body(attributes)
    }

    private func failure(_ verb: String, _ error: UnsafeMutablePointer<GError>, timedOut: Bool) -> OAuthError {
        let message = String(cString: error.pointee.message)
        g_error_free(error)
        if timedOut {
            return .storage(
                "the keyring did not answer within \(Int(timeout)) s (it may be locked, waiting for its password).")
        }
        return .storage("could not \(verb) the keyring (\(message)).")
    }
}

/// A GCancellable that another thread may cancel: freed only when both the
/// call and the timer are done with it.
private final class Cancellable: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GCancellable> = g_cancellable_new()
    deinit { g_object_unref(pointer) }
    func cancel() { g_cancellable_cancel(pointer) }
    var isCancelled: Bool { g_cancellable_is_cancelled(pointer) != 0 }
}
