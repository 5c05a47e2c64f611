import CGio
import Synchronization

/// A method call to an exported object: who sent it, what it asks, and how to
/// answer. GDBus takes the answer from any thread, so the work may run off
/// GTK's thread and answer when it is done. Answered exactly once: a second
/// answer is dropped, and a call released without one is answered with an error
/// (its caller is not left waiting out its timeout) and a GLib warning, which the
/// end-to-end tests make fatal, so that the code path that dropped it is found.
public final class DBusMethodCall: @unchecked Sendable {
    // Owned until answered: answering hands the reference to GDBus.
    private let invocation: OpaquePointer
    private let answered = Atomic(false)
    public let sender: String
    public let method: String
    public let arguments: [DBusValue]
    /// The connection the call came on, held for as long as the call is: answering hands the
    /// invocation (and the reference it held) to GDBus, so it is never read from the invocation after.
    public let connection: OpaquePointer

    init(invocation: OpaquePointer, sender: String, method: String, parameters: OpaquePointer) {
        self.invocation = invocation
        self.sender = sender
        self.method = method
        arguments = DBusValue(reading: parameters).children
        connection = g_dbus_method_invocation_get_connection(invocation)
        g_object_ref(UnsafeMutableRawPointer(connection))
    }

    /// The reply: its values, in the order the interface names them.
    public func reply(_ values: [DBusValue]) {
        guard firstAnswer() else { return }
        g_dbus_method_invocation_return_value(invocation, DBusValue.tuple(values).makeVariant())
    }

    /// An error reply: a D-Bus error name and its sentence.
    public func fail(_ name: String, _ message: String) {
        guard firstAnswer() else { return }
        g_dbus_method_invocation_return_dbus_error(invocation, name, message)
    }

    private func firstAnswer() -> Bool {
        if answered.exchange(true, ordering: .acquiringAndReleasing) {
            latchkey_warning("A D-Bus call to \(method) was answered twice; the second answer is dropped.")
            return false
        }
        return true
    }

    deinit {
        defer { g_object_unref(UnsafeMutableRawPointer(connection)) }
        guard !answered.load(ordering: .acquiring) else { return }
        g_dbus_method_invocation_return_dbus_error(
            invocation, "org.freedesktop.DBus.Error.Failed", "The call to \(method) was dropped without an answer (a bug in Latchkey).")
        latchkey_warning("A D-Bus call to \(method) was released unanswered; its caller was told so.")
    }
}

/// An object exported on a D-Bus connection with one interface, described by its
/// introspection XML (so `Introspect` and GDBus's own argument checks come with
/// it). Calls are handed to `handler` on GTK's thread, which must not block:
/// it starts the work and answers the call when the work is done.
@MainActor
public final class DBusExport {
    public typealias Handler = @Sendable (DBusMethodCall) -> Void

    // Read from `deinit`, outside the actor: a GDBusConnection is safe from any thread.
    private nonisolated(unsafe) let connection: OpaquePointer
    private let registration: guint

    /// Exports `interfaceXML`'s first interface at `path` on `connection`; throws GLib's reason.
    public init(connection: OpaquePointer, path: String, interfaceXML: String, handler: @escaping Handler) throws {
        var error: UnsafeMutablePointer<GError>?
        guard let node = g_dbus_node_info_new_for_xml(interfaceXML, &error) else { throw GLibError(error) }
        defer { g_dbus_node_info_unref(node) }
        guard let interface = node.pointee.interfaces?.pointee else { throw GLibError(nil) }
        let box = Unmanaged.passRetained(ClosureBox(handler)).toOpaque()
        let id = withUnsafePointer(to: &Self.vtable) { vtable in
            g_dbus_connection_register_object(
                connection, path, interface, vtable, box, { data in Unmanaged<ClosureBox<Handler>>.fromOpaque(data!).release() },
                &error)
        }
        guard id != 0 else { throw GLibError(error) }
        self.connection = connection
        registration = id
        g_object_ref(UnsafeMutableRawPointer(connection))
    }

    /// Takes the object off the bus; calls under way may still be answered.
    public func unregister() {
        g_dbus_connection_unregister_object(connection, registration)
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    private static var vtable = GDBusInterfaceVTable(
        method_call: { _, sender, _, _, method, parameters, invocation, data in
            let handler = Unmanaged<ClosureBox<Handler>>.fromOpaque(data!).takeUnretainedValue().value
            handler(
                DBusMethodCall(
                    invocation: invocation!, sender: sender.map { String(cString: $0) } ?? "", method: String(cString: method!),
                    parameters: parameters!))
        },
        get_property: nil, set_property: nil, padding: (nil, nil, nil, nil, nil, nil, nil, nil))
}

/// Who is at the other end of a bus name, as the bus daemon vouches (`GetConnectionCredentials`).
public enum DBusPeer {
    /// The process id and user id of `sender` on `connection`; nil when the bus does not say.
    /// Blocks for one round trip to the bus daemon: call it off GTK's thread.
    public static func credentials(of sender: String, on connection: OpaquePointer) -> (pid: Int32, uid: UInt32)? {
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionCredentials",
            DBusValue.tuple([.string(sender)]).makeVariant(), nil, G_DBUS_CALL_FLAGS_NONE, 2000, nil, &error)
        if let error { g_error_free(error) }
        guard let reply else { return nil }
        defer { g_variant_unref(reply) }
        let credentials = DBusValue(reading: reply).children.first
        guard let pid = credentials?["ProcessID"]?.integer, let uid = credentials?["UnixUserID"]?.integer else { return nil }
        return (Int32(truncatingIfNeeded: pid), UInt32(truncatingIfNeeded: uid))
    }
}
