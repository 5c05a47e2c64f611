import CGio

/// GLib's default main context, the loop that D-Bus calls, bus-name watches and GTK's events come
/// in on: the one way onto its thread, and a loop to run it with no GTK (the agent).
///
/// Work is queued as a source and runs on a later turn of the loop — never inline, even when
/// nobody owns the context (`g_main_context_invoke` would run it at once, on the calling thread).
/// GLib's destroy notify releases the closure, so it is freed exactly once, whether or not it ran.
/// GtkKit's `MainLoop` hops through here, entering GTK's thread its own way.
public enum MainContext {
    /// `body` on the default context's thread, once, on a later turn of its loop.
    public static func idle(_ body: @escaping @Sendable () -> Void) {
        g_idle_add_full(G_PRIORITY_DEFAULT, runOnce, retain(body), release)
    }

    /// `body` on the default context's thread after `milliseconds`; `yielding`: behind everything
    /// else due then, GTK's drawing included (G_PRIORITY_LOW rather than the default).
    public static func after(milliseconds: UInt32, yielding: Bool = false, _ body: @escaping @Sendable () -> Void) {
        g_timeout_add_full(yielding ? G_PRIORITY_LOW : G_PRIORITY_DEFAULT, guint(milliseconds), runOnce, retain(body), release)
    }

    /// `body` on the default context's thread each time `descriptor` is readable or hung up, until
    /// it returns false.
    public static func watch(_ descriptor: Int32, _ body: @escaping @Sendable () -> Bool) {
        let condition = GIOCondition(rawValue: G_IO_IN.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue)
        g_unix_fd_add_full(
            G_PRIORITY_DEFAULT, descriptor, condition, readable, Unmanaged.passRetained(ClosureBox(body)).toOpaque(), release)
    }

    /// `body` on the default context's thread once the child `pid` (spawned with
    /// G_SPAWN_DO_NOT_REAP_CHILD) has ended, with its wait status as waitpid gives it: GLib's loop
    /// reaps it, and no thread waits for it.
    public static func whenEnded(_ pid: Int32, _ body: @escaping @Sendable (Int32) -> Void) {
        g_child_watch_add_full(G_PRIORITY_DEFAULT, pid, ended, Unmanaged.passRetained(ClosureBox(body)).toOpaque(), release)
    }

    private static let ended: GChildWatchFunc = { _, status, data in
        Unmanaged<ClosureBox<@Sendable (Int32) -> Void>>.fromOpaque(data!).takeUnretainedValue().value(status)
    }

    private static let readable: GUnixFDSourceFunc = { _, _, data in
        Unmanaged<ClosureBox<@Sendable () -> Bool>>.fromOpaque(data!).takeUnretainedValue().value() ? 1 : 0
    }

    private typealias Body = @Sendable () -> Void

    private static func retain(_ body: @escaping Body) -> gpointer {
        Unmanaged.passRetained(ClosureBox(body)).toOpaque()
    }

    private static let runOnce: GSourceFunc = { data in
        Unmanaged<ClosureBox<Body>>.fromOpaque(data!).takeUnretainedValue().value()
        return gboolean(0)  // G_SOURCE_REMOVE: run once
    }

    // A box of either kind is released the same way: its class is what counts, not what it holds.
    private static let release: GDestroyNotify = { data in
        Unmanaged<AnyObject>.fromOpaque(data!).release()
    }
}

/// A program of the session with no GTK (the agent): GLib's default loop run on the main thread,
/// where its D-Bus calls come in (`MainContext` hops onto it).
public enum PlainLoop {
    /// Runs GLib's default loop on this thread (the main one) until the process ends.
    @MainActor public static func run() -> Never {
        let loop = g_main_loop_new(nil, 0)
        g_main_loop_run(loop)
        fatalError("GLib's main loop returned, with nothing that quits it")
    }

    /// The program's name on the desktop (window lists, the accessibility bus, GLib's messages).
    public static func setName(_ name: String, programName: String) {
        g_set_application_name(name)
        g_set_prgname(programName)
    }
}
