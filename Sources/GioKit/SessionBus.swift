import CGio

/// The few questions Latchkey asks of the D-Bus session bus itself.
public enum SessionBus {
    /// Whether some process owns `name` now. Asked without D-Bus activation:
    /// starting a service (a keyring daemon) just to ask would prompt or hang.
    public static func hasOwner(_ name: String) -> Bool { owned(name) ?? false }

    /// Whether `name` has an owner on the session bus as the bus says it; nil when the bus said
    /// nothing (no bus, a timeout, a refusal): not known to be gone.
    public static func owned(_ name: String) -> Bool? {
        guard
            let reply = call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                g_variant_new_string(name), replyType: "(b)")
        else { return nil }
        defer { g_variant_unref(reply) }
        let answer = g_variant_get_child_value(reply, 0)
        defer { g_variant_unref(answer) }
        return g_variant_get_boolean(answer) != 0
    }

    /// One method call with one argument (a tuple is made of it); the reply, or nil on any failure.
    static func call(
        _ destination: String, _ path: String, _ interface: String, _ method: String, _ arguments: OpaquePointer?...,
        replyType: String? = nil, flags: GDBusCallFlags = G_DBUS_CALL_FLAGS_NO_AUTO_START,
        timeoutMilliseconds: Int32 = 2000
    ) -> OpaquePointer? {
        var children = arguments
        // Sunk at once, so that no path leaks the floating arguments.
        let parameters = g_variant_ref_sink(
            children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) })
        defer { g_variant_unref(parameters) }
        var error: UnsafeMutablePointer<GError>?
        guard let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            if let error { g_error_free(error) }
            return nil
        }
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        // A reply of another shape (from whoever owns the name) is an error, not a crash.
        let expected = replyType.map { g_variant_type_new($0) }
        defer { expected.map { g_variant_type_free($0) } }
        let reply = g_dbus_connection_call_sync(
            bus, destination, path, interface, method, parameters, expected ?? nil, flags, timeoutMilliseconds, nil, &error)
        if let error { g_error_free(error) }
        return reply
    }

    /// The session bus connection this process shares (GLib's), or GLib's reason there is none.
    /// The process ends when the bus goes away (GLib's default for it): a service ends with its session.
    public static func shared() -> Result<OpaquePointer, GLibError> {
        var error: UnsafeMutablePointer<GError>?
        guard let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else { return .failure(GLibError(error)) }
        return .success(bus)
    }

    /// How asking for a well-known name went.
    public enum NameRequest: Sendable, Equatable {
        case owned
        /// Another process holds it (and the request was not queued).
        case taken
        case failed(String)
    }

    /// Asks the bus for `name` once, not queued (RequestName with DO_NOT_QUEUE). Made after the
    /// objects are exported: a client the bus started this process for calls them the moment the
    /// name is ours.
    public static func requestName(_ name: String, on connection: OpaquePointer) -> NameRequest {
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
            DBusValue.tuple([.string(name), .uint32(4)]).makeVariant(), nil, G_DBUS_CALL_FLAGS_NONE, 5000, nil, &error)
        guard let reply else { return .failed(GLibError(error).description) }
        defer { g_variant_unref(reply) }
        // 1: the primary owner now; 4: already it. 3: someone else is.
        switch DBusValue(reading: reply).children.first?.integer {
        case 1, 4: return .owned
        case 3: return .taken
        case let code: return .failed("the bus answered \(code.map(String.init) ?? "nothing")")
        }
    }

    /// Gives `name` up (ReleaseName): calls to it from now on start (or wait for) another owner.
    public static func releaseName(_ name: String, on connection: OpaquePointer) {
        let reply = g_dbus_connection_call_sync(
            connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReleaseName",
            DBusValue.tuple([.string(name)]).makeVariant(), nil, G_DBUS_CALL_FLAGS_NONE, 5000, nil, nil)
        if let reply { g_variant_unref(reply) }
    }

    /// Sends what is queued on `connection` (replies included) before the process ends.
    public static func flush(_ connection: OpaquePointer) {
        g_dbus_connection_flush_sync(connection, nil, nil)
    }
}
