import CGtk
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// GTK's thread is the process's main thread, where GTK was initialised and its
/// loop runs; the main actor stands for it.
///
/// One exception: a copy of GtkKit inside a library that brings its own Swift
/// runtime (the sign-in library, opened by an app whose runtime is linked in
/// statically) cannot ask its runtime about the main actor. That runtime's
/// libdispatch took the thread that happened to load it for "main", and GTK's
/// thread is not that one. Such a library calls `adoptCurrent()` where GTK
/// calls it; from then on its checks compare threads instead.
public enum GtkThread {
    /// The adopted thread (`pthread_t`, an integer on Linux), or 0: ask the main actor.
    private static let adopted = Atomic<UInt>(0)

    /// Takes the calling thread for GTK's, in this copy of GtkKit: the first time
    /// from inside GTK's running loop (the thread that owns GLib's default
    /// context), then always from that same thread — also after the loop has
    /// ended, when what GTK's objects held is released.
    public static func adoptCurrent() {
        let current = UInt(pthread_self())
        if adopted.load(ordering: .relaxed) == current { return }
        Swift.precondition(g_main_context_is_owner(nil) != 0, "GtkThread.adoptCurrent() outside GTK's running loop")
        let (adoptedNow, previous) = adopted.compareExchange(expected: 0, desired: current, ordering: .relaxed)
        Swift.precondition(adoptedNow || previous == current, "GtkThread.adoptCurrent() from a second thread")
    }

    /// Traps unless called on GTK's thread, as swift-nio's `preconditionInEventLoop` does:
    /// a GObject made or connected elsewhere would race with the loop.
    @inline(__always)
    public static func precondition(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        let thread = adopted.load(ordering: .relaxed)
        if thread == 0 {
            MainActor.preconditionIsolated("\(what()) must happen on GTK's thread", file: file, line: line)
        } else {
            Swift.precondition(thread == UInt(pthread_self()), "\(what()) must happen on GTK's thread", file: file, line: line)
        }
    }

    /// `MainActor.assumeIsolated`, checked as `precondition` checks: runs main-actor
    /// code from a C callback that GTK makes on its thread.
    public static func assumeIsolated<T: Sendable>(
        _ work: @MainActor () throws -> T, file: StaticString = #fileID, line: UInt = #line
    ) rethrows -> T {
        if adopted.load(ordering: .relaxed) == 0 {
            return try MainActor.assumeIsolated(work, file: file, line: line)
        }
        precondition("Main-actor code", file: file, line: line)
        // What MainActor.assumeIsolated itself does once its check passed: a synchronous
        // closure's isolation is not part of its calling convention.
        return try withoutActuallyEscaping(work) { work in
            try unsafeBitCast(work, to: (() throws -> T).self)()
        }
    }
}
