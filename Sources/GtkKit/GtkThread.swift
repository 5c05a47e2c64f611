/// GTK's thread is the process's main thread, where GTK was initialised and its
/// loop runs; the main actor stands for it.
public enum GtkThread {
    /// Traps unless called on GTK's thread, as swift-nio's `preconditionInEventLoop` does:
    /// a GObject made or connected elsewhere would race with the loop.
    @inline(__always)
    public static func precondition(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        MainActor.preconditionIsolated("\(what()) must happen on GTK's thread", file: file, line: line)
    }
}
