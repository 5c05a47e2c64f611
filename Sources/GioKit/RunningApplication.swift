import CGio

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
        guard
            let reply = SessionBus.call(
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

    /// Activates `action` with a string parameter in the running instance; false when it did not answer.
    public func activate(_ action: String, parameter: String) -> Bool {
        var boxed: OpaquePointer? = g_variant_new_variant(g_variant_new_string(parameter))
        let parameters = g_variant_new_array(latchkey_variant_type_variant(), &boxed, 1)
        let noPlatformData = g_variant_new_array(latchkey_variant_type_string_to_variant(), nil, 0)
        guard
            let reply = SessionBus.call(
                id, objectPath, "org.gtk.Actions", "Activate", g_variant_new_string(action), parameters, noPlatformData)
        else { return false }
        g_variant_unref(reply)
        return true
    }
}
