import CGio

/// Told when a name leaves the session bus, by the bus's own `NameOwnerChanged` signal: nothing is
/// polled. For a caller's unique name (`:1.42`), which is never given to another: gone is gone.
/// The signal is delivered on GLib's default main context (the agent's main loop). `connection` is
/// the process's shared session bus (`SessionBus.shared`).
public final class BusNameWatch: Sendable {
    private nonisolated(unsafe) let bus: OpaquePointer?
    private let subscription: guint

    /// Watches `name` on `connection`; `gone` runs once it has left (at once, on the calling thread,
    /// when it already has). Ends when this value goes.
    public init(_ name: String, on connection: OpaquePointer, gone: @escaping @Sendable () -> Void) {
        g_object_ref(UnsafeMutableRawPointer(connection))
        bus = connection
        let box = Unmanaged.passRetained(ClosureBox(gone)).toOpaque()
        subscription = g_dbus_connection_signal_subscribe(
            connection, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged", "/org/freedesktop/DBus", name,
            G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, data in
                // (name, old owner, new owner): gone when the new owner is empty.
                guard let parameters, g_variant_n_children(parameters) == 3 else { return }
                let owner = g_variant_get_child_value(parameters, 2)
                defer { g_variant_unref(owner) }
                guard let text = g_variant_get_string(owner, nil), text.pointee == 0 else { return }
                Unmanaged<ClosureBox<@Sendable () -> Void>>.fromOpaque(data!).takeUnretainedValue().value()
            }, box, { data in Unmanaged<ClosureBox<@Sendable () -> Void>>.fromOpaque(data!).release() })
        // Gone before the watch began: the bus says so when asked (on the same shared connection, after
        // the watch's match rule: nothing falls between the two).
        if SessionBus.owned(name) == false { gone() }
    }

    deinit {
        if let bus {
            g_dbus_connection_signal_unsubscribe(bus, subscription)
            g_object_unref(UnsafeMutableRawPointer(bus))
        }
    }
}
