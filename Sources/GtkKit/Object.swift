import CGtk
import GioKit

/// Owns one reference to a GObject and the signal handlers connected through it.
///
/// Handlers live as long as the wrapper: keep the wrapper of any widget whose
/// signals matter (a local `Button` would lose its "clicked" handler at the end
/// of the scope).
///
/// A new widget starts with a floating reference; `ref_sink` makes it ours,
/// `deinit` gives it back. Handlers are disconnected in `deinit`, and each
/// closure box is released by GLib's closure notify — never by hand.
///
/// Everything here happens on GTK's thread (the main actor): objects are made,
/// connected and released there, and handlers run there.
@MainActor
open class Object {
    /// Read from `deinit`, which Swift runs outside the actor; sound because
    /// `deinit` checks that it runs on GTK's thread before touching it.
    public nonisolated(unsafe) let pointer: UnsafeMutablePointer<GObject>
    /// Same reason as `pointer`.
    private nonisolated(unsafe) var handlerIDs: [gulong] = []

    /// Takes a widget's floating reference, or adds a reference of our own.
    public init(_ raw: UnsafeMutableRawPointer) {
        GtkThread.precondition("Making a GObject wrapper")
        pointer = raw.assumingMemoryBound(to: GObject.self)
        g_object_ref_sink(pointer)
    }

    /// Adopts the full reference a constructor such as `gtk_application_new` returned.
    public init(adopting raw: UnsafeMutableRawPointer) {
        GtkThread.precondition("Making a GObject wrapper")
        pointer = raw.assumingMemoryBound(to: GObject.self)
    }

    deinit {
        // The last reference must go on GTK's thread: unref there may finalize a widget.
        GtkThread.precondition("Releasing a GObject wrapper")
        Self.disconnect(handlerIDs, from: pointer)
        g_object_unref(pointer)
    }

    public func disconnectAll() {
        Self.disconnect(handlerIDs, from: pointer)
        handlerIDs.removeAll()
    }

    /// Disconnects what is still connected: destroying a widget already
    /// disconnected every handler on it, and disconnecting an id twice warns.
    private nonisolated static func disconnect(_ ids: [gulong], from pointer: UnsafeMutablePointer<GObject>) {
        for id in ids where g_signal_handler_is_connected(pointer, id) != 0 {
            g_signal_handler_disconnect(pointer, id)
        }
    }

    /// Connects a C trampoline with a retained box as its user data.
    @discardableResult
    package func connect<Value>(_ signal: String, _ trampoline: GCallback, _ value: Value) -> gulong {
        GtkThread.precondition("Connecting a signal")
        let box = Unmanaged.passRetained(ClosureBox(value)).toOpaque()
        let id = g_signal_connect_data(
            pointer, signal, trampoline, box,
            { data, _ in Unmanaged<AnyObject>.fromOpaque(data!).release() }, GConnectFlags(rawValue: 0))
        handlerIDs.append(id)
        return id
    }

    /// A signal whose handler takes no arguments and returns nothing ("clicked", "activate", "map").
    @discardableResult
    public func on(_ signal: String, _ handler: @escaping @MainActor () -> Void) -> gulong {
        let trampoline: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            let handler = signalHandler(data, (@MainActor () -> Void).self)
            GtkThread.assumeIsolated { handler() }
        }
        return connect(signal, unsafeBitCast(trampoline, to: GCallback.self), handler)
    }

    /// A signal with one pointer argument and a gboolean result ("delete-event").
    @discardableResult
    public func onBool(_ signal: String, _ handler: @escaping @MainActor () -> Bool) -> gulong {
        let trampoline: @convention(c) (gpointer?, gpointer?, gpointer?) -> gboolean = { _, _, data in
            let handler = signalHandler(data, (@MainActor () -> Bool).self)
            return GtkThread.assumeIsolated { handler() } ? 1 : 0
        }
        return connect(signal, unsafeBitCast(trampoline, to: GCallback.self), handler)
    }

    /// `notify::property`: (object, GParamSpec*, data) -> void.
    @discardableResult
    public func onNotify(_ property: String, _ handler: @escaping @MainActor () -> Void) -> gulong {
        onIgnoringArgument("notify::\(property)", handler)
    }

    /// A signal with one pointer argument the handler does not need: (object, pointer, data) -> void,
    /// such as a GSimpleAction's "activate" (its parameter).
    @discardableResult
    public func onIgnoringArgument(_ signal: String, _ handler: @escaping @MainActor () -> Void) -> gulong {
        let trampoline: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, data in
            let handler = signalHandler(data, (@MainActor () -> Void).self)
            GtkThread.assumeIsolated { handler() }
        }
        return connect(signal, unsafeBitCast(trampoline, to: GCallback.self), handler)
    }
}

/// The handler a signal was connected with (`connect`'s value), from the
/// user data GLib passes to the trampoline.
@inline(__always)
package func signalHandler<Handler>(_ data: gpointer?, _ type: Handler.Type) -> Handler {
    Unmanaged<ClosureBox<Handler>>.fromOpaque(data!).takeUnretainedValue().value
}

/// Casts between GObject pointer types, as `G_TYPE_CHECK_INSTANCE_CAST` would.
@inline(__always)
package func cast<T>(_ pointer: UnsafeMutableRawPointer) -> UnsafeMutablePointer<T> {
    pointer.assumingMemoryBound(to: T.self)
}

@inline(__always)
package func cast<T, U>(_ pointer: UnsafeMutablePointer<U>) -> UnsafeMutablePointer<T> {
    UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: T.self)
}
