import CGtk
import GioKit

/// The one way back onto the GTK thread (GioKit's `MainContext`, entered as GTK's thread).
///
/// GTK owns the main thread: while `g_application_run` is in charge, neither
/// `DispatchQueue.main` nor the main actor's executor gets a turn, so
/// `await MainActor.run` would wait for good. Work done elsewhere (network
/// I/O, the keyring) comes back through the GLib main context instead: the
/// closure is queued as an idle source and runs on a later turn of the loop —
/// never inline, even when nobody owns the context (`g_main_context_invoke`
/// would run it at once, on the calling thread). It runs under
/// `GtkThread.assumeIsolated`, which traps if GLib ever dispatched it elsewhere.
/// GLib's destroy notify releases the closure, so it is freed exactly once,
/// whether or not it ran.
public enum MainLoop {
    public static func perform(_ work: @escaping @MainActor @Sendable () -> Void) {
        MainContext.idle { GtkThread.assumeIsolated { work() } }
    }

    /// The one way off the GTK thread and back: `job` runs detached (a plain
    /// `Task { }` started on this thread would wait for the main actor's
    /// executor, which never runs while GTK's loop does: a silent hang, so the
    /// tests fail the build on one), and `answer` gets its result on the GTK
    /// thread, through GLib's loop. Cancelling the returned task cancels `job`.
    @discardableResult
    public static func work<T: Sendable>(
        _ job: @escaping @Sendable () async -> T, then answer: @escaping @MainActor @Sendable (T) -> Void
    ) -> Task<Void, Never> {
        Task.detached {
            let result = await job()
            perform { answer(result) }
        }
    }

    /// `work(_:then:)` for a job whose end nobody waits for.
    @discardableResult
    public static func work(_ job: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task.detached { await job() }
    }

    /// Runs `work` on the GTK thread after `milliseconds`; `yielding`: only once a frame then due is drawn.
    public static func after(milliseconds: UInt32, yielding: Bool = false, _ work: @escaping @MainActor @Sendable () -> Void) {
        MainContext.after(milliseconds: milliseconds, yielding: yielding) { GtkThread.assumeIsolated { work() } }
    }

    /// Runs `work` on the GTK thread and waits for its result, from any task.
    public static func run<T: Sendable>(_ work: @escaping @MainActor @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            perform { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Runs `work` on the GTK thread and waits for it, from any task.
    public static func run<T: Sendable>(_ work: @escaping @MainActor @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            perform { continuation.resume(returning: work()) }
        }
    }

    /// For a program without a GtkApplication (a command that shows a sign-in
    /// window and exits): GTK initialised on this thread, which becomes GTK's.
    /// False when there is no display to open.
    @MainActor public static func initializeWithoutApplication() -> Bool {
        gtk_init_check(nil, nil) != 0
    }

    /// Runs GTK's main loop on this thread until `quit()` is called from it.
    @MainActor public static func runUntilQuit() { gtk_main() }

    @MainActor public static func quit() { gtk_main_quit() }
}
