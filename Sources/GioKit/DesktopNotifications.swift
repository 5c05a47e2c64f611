import CGio

/// Desktop notifications through GLib's `GNotification`, for a program with no GTK (the agent):
/// GLib sends each to the desktop's service its own way — the notification portal inside a
/// sandbox, GNOME Shell's `org.gtk.Notifications` where the shell runs, else the
/// `org.freedesktop.Notifications` service (notification-daemon, dunst, mako, Plasma) — and a
/// button's action comes back here as `actionName` with its string target.
///
/// A GApplication of `id` is registered for it, not unique (the program owns its bus names itself,
/// on other object paths), with one action. Everything GLib is asked runs on the default main
/// context's thread (`MainContext.idle`), where the fdo backend's answers come in too.
public final class DesktopNotifications: @unchecked Sendable {
    /// GApplication*; touched on the main context's thread only (made there, or before its loop runs).
    private let application: UnsafeMutablePointer<GApplication>
    public static let actionName = "sign-in-again"

    /// Nil when the application cannot be registered (no session bus): notices are then only logged.
    /// `activated` runs on the main context's thread with the button's target.
    public init?(id: String, activated: @escaping @Sendable (String) -> Void) {
        guard g_application_id_is_valid(id) != 0 else { return nil }
        guard let made = g_application_new(id, G_APPLICATION_NON_UNIQUE) else { return nil }
        application = made
        let action = g_simple_action_new(Self.actionName, latchkey_variant_type_string())
        let box = Unmanaged.passRetained(ClosureBox(activated)).toOpaque()
        let handler: @convention(c) (OpaquePointer?, OpaquePointer?, gpointer?) -> Void = { _, parameter, data in
            guard let parameter, let data, g_variant_is_of_type(parameter, latchkey_variant_type_string()) != 0 else { return }
            let target = String(cString: g_variant_get_string(parameter, nil))
            Unmanaged<ClosureBox<@Sendable (String) -> Void>>.fromOpaque(data).takeUnretainedValue().value(target)
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(action), "activate", unsafeBitCast(handler, to: GCallback.self), box,
            { data, _ in Unmanaged<ClosureBox<@Sendable (String) -> Void>>.fromOpaque(data!).release() }, GConnectFlags(rawValue: 0))
        g_action_map_add_action(OpaquePointer(UnsafeMutableRawPointer(application)), OpaquePointer(UnsafeMutableRawPointer(action)))
        g_object_unref(UnsafeMutableRawPointer(action))
        var error: UnsafeMutablePointer<GError>?
        guard g_application_register(application, nil, &error) != 0 else {
            if let error { g_error_free(error) }
            g_object_unref(UnsafeMutableRawPointer(application))
            return nil
        }
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(application)) }

    /// Shows (or replaces, by `id`) a notification; `button`: a label and the target its action gets,
    /// which clicking the notification itself gets too. `important`: urgent (GLib's word; the freedesktop
    /// services' "critical"): where the service honours it (GNOME Shell, dunst) it stays on the screen
    /// until dismissed, where a normal one goes after a few seconds, and shows through "do not disturb". For a sign-in that ended: programs fail until it is
    /// signed in again, and a person away from the screen still finds it.
    public func send(id: String, title: String, body: String, button: (label: String, target: String)?, important: Bool = false) {
        MainContext.idle { [self] in
            let notification = g_notification_new(title)
            g_notification_set_body(notification, body)
            if important { g_notification_set_priority(notification, G_NOTIFICATION_PRIORITY_URGENT) }
            if let button {
                let action = "app." + Self.actionName
                g_notification_add_button_with_target_value(notification, button.label, action, g_variant_new_string(button.target))
                g_notification_set_default_action_and_target_value(notification, action, g_variant_new_string(button.target))
            }
            g_application_send_notification(application, id, notification)
            g_object_unref(UnsafeMutableRawPointer(notification))
        }
    }
}
