import CGtk

/// The one way back onto the GTK thread.
///
/// GTK owns the main thread: while `g_application_run` is in charge, neither
/// `DispatchQueue.main` nor the main actor's executor gets a turn. Work done
/// elsewhere (network I/O, the keyring) comes back through the GLib main
/// context instead; the box holding the closure is released by GLib's destroy
/// notify, so it is freed exactly once whether or not the work ran.
public enum MainLoop {
    public static func perform(_ work: @escaping () -> Void) {
        let box = Unmanaged.passRetained(ClosureBox(work)).toOpaque()
        g_main_context_invoke_full(
            nil, G_PRIORITY_DEFAULT,
            { data in
                Unmanaged<ClosureBox<() -> Void>>.fromOpaque(data!).takeUnretainedValue().value()
                return gboolean(0)  // G_SOURCE_REMOVE: run once
            },
            box,
            { data in Unmanaged<ClosureBox<() -> Void>>.fromOpaque(data!).release() })
    }

    /// Runs `work` on the GTK thread after `milliseconds`.
    public static func after(milliseconds: UInt32, _ work: @escaping () -> Void) {
        let box = Unmanaged.passRetained(ClosureBox(work)).toOpaque()
        g_timeout_add_full(
            G_PRIORITY_DEFAULT, guint(milliseconds),
            { data in
                Unmanaged<ClosureBox<() -> Void>>.fromOpaque(data!).takeUnretainedValue().value()
                return gboolean(0)
            },
            box,
            { data in Unmanaged<ClosureBox<() -> Void>>.fromOpaque(data!).release() })
    }
}

/// Carries a Swift value through a C `gpointer`.
package final class ClosureBox<Value> {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
