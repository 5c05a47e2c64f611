import CGtk

/// The few questions Latchkey asks of the D-Bus session bus itself.
public enum SessionBus {
    /// Whether some process owns `name` now. Asked without D-Bus activation:
    /// starting a service (a keyring daemon) just to ask would prompt or hang.
    public static func hasOwner(_ name: String) -> Bool {
        guard let reply = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
            g_variant_new_string(name), replyType: "(b)")
        else { return false }
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
}

/// Another process's running GApplication, reached over the session bus
/// through its exported actions (`org.gtk.Actions`), as `gapplication action` does.
public struct RunningApplication {
    public let id: String

    /// The instance that owns `id` on the session bus now, if one runs.
    public static func find(id: String) -> RunningApplication? {
        SessionBus.hasOwner(id) ? RunningApplication(id: id) : nil
    }

    /// GApplication's object path: the id with dots as slashes, dashes as underscores.
    var objectPath: String {
        "/" + String(id.map { $0 == "." ? "/" : $0 == "-" ? "_" : $0 })
    }

    /// The string state of `action`, or nil when it has none (or the instance does not answer).
    public func state(of action: String) -> String? {
        guard let reply = SessionBus.call(
            id, objectPath, "org.gtk.Actions", "Describe", g_variant_new_string(action), replyType: "((bgav))")
        else { return nil }
        defer { g_variant_unref(reply) }
        // (bgav): enabled, parameter type, state as an array of zero or one variant.
        let description = g_variant_get_child_value(reply, 0)
        defer { g_variant_unref(description) }
        let states = g_variant_get_child_value(description, 2)
        defer { g_variant_unref(states) }
        guard g_variant_n_children(states) == 1 else { return nil }
        let boxed = g_variant_get_child_value(states, 0)
        defer { g_variant_unref(boxed) }
        let state = g_variant_get_variant(boxed)
        defer { g_variant_unref(state) }
        guard g_variant_is_of_type(state, latchkey_variant_type_string()) != 0 else { return nil }
        return String(cString: g_variant_get_string(state, nil))
    }

    /// Activates `action` (no parameter) in the running instance; false when it did not answer.
    public func activate(_ action: String) -> Bool {
        let noParameter = g_variant_new_array(latchkey_variant_type_variant(), nil, 0)
        let noPlatformData = g_variant_new_array(latchkey_variant_type_string_to_variant(), nil, 0)
        guard let reply = SessionBus.call(
            id, objectPath, "org.gtk.Actions", "Activate", g_variant_new_string(action), noParameter, noPlatformData)
        else { return false }
        g_variant_unref(reply)
        return true
    }
}
