/// Carries a Swift value through a C `gpointer`. Sendable only for what it
/// carries: GLib hands the box back on the thread that runs the source or
/// signal, and the values put in it are `@Sendable` closures or main-actor-only.
package final class ClosureBox<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
