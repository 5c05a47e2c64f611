import CGtk

/// Choosing a file to open: GTK's native chooser, which is the desktop
/// portal's dialog where one runs and GTK's own file dialog otherwise.
public final class FileChooser: Object {
    public init(title: String, over parent: Window, patternName: String, pattern: String) {
        super.init(
            adopting: UnsafeMutableRawPointer(
                gtk_file_chooser_native_new(title, parent.window, GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel"))!)
        let filter = gtk_file_filter_new()
        gtk_file_filter_set_name(filter, patternName)
        gtk_file_filter_add_pattern(filter, pattern)
        gtk_file_chooser_add_filter(OpaquePointer(pointer), filter)
        // Modal over the dialog that opened it: no second chooser, no Cancel beneath it.
        gtk_native_dialog_set_modal(cast(pointer), 1)
    }

    /// Shows the chooser; `done` gets the chosen path, or nil when the person cancelled.
    public func run(_ done: @escaping @MainActor (String?) -> Void) {
        let chooser = OpaquePointer(pointer)
        let handler: @MainActor (Int32) -> Void = { response in
            guard response == GTK_RESPONSE_ACCEPT.rawValue, let name = gtk_file_chooser_get_filename(chooser) else {
                return done(nil)
            }
            defer { g_free(name) }
            done(String(cString: name))
        }
        let trampoline: @convention(c) (gpointer?, gint, gpointer?) -> Void = { _, response, data in
            let handler = signalHandler(data, (@MainActor (Int32) -> Void).self)
            GtkThread.assumeIsolated { handler(response) }
        }
        connect("response", unsafeBitCast(trampoline, to: GCallback.self), handler)
        gtk_native_dialog_show(cast(pointer))
    }
}
