import CGtk

open class Window: Widget {
    public var window: UnsafeMutablePointer<GtkWindow> { cast(pointer) }

    /// A plain top-level window.
    public init(title: String) {
        super.init(gtk_window_new(GTK_WINDOW_TOPLEVEL))
        self.title = title
    }

    /// A window that belongs to a GtkApplication (it keeps the application running).
    public init(application: Application, title: String) {
        super.init(gtk_application_window_new(application.application))
        self.title = title
    }

    public var title: String {
        get { gtk_window_get_title(window).map { String(cString: $0) } ?? "" }
        set { gtk_window_set_title(window, newValue) }
    }

    public func setDefaultSize(width: Int32, height: Int32) { gtk_window_set_default_size(window, width, height) }
    public func setIcon(name: String) { gtk_window_set_icon_name(window, name) }
    public func setTitlebar(_ bar: Widget) { gtk_window_set_titlebar(window, bar.widget) }
    public func setChild(_ child: Widget) { gtk_container_add(cast(widget), child.widget) }
    public func present() { gtk_window_present(window) }

    /// Modal over `parent`, centred on it, closed with it.
    public func makeModal(over parent: Window) {
        makeModal(over: parent.window)
    }

    public func makeModal(over parent: UnsafeMutablePointer<GtkWindow>) {
        gtk_window_set_transient_for(window, parent)
        gtk_window_set_modal(window, 1)
        gtk_window_set_destroy_with_parent(window, 1)
        gtk_window_set_position(window, GTK_WIN_POS_CENTER_ON_PARENT)
    }

    /// The close button or Alt+F4. Return true to keep the window open.
    public func onCloseRequest(_ handler: @escaping @MainActor () -> Bool) { onBool("delete-event", handler) }

    /// Opens `uri` with the desktop's default handler (GIO: mimeapps.list and .desktop files).
    public func showURI(_ uri: String) throws {
        var error: UnsafeMutablePointer<GError>?
        if gtk_show_uri_on_window(window, uri, guint32(GDK_CURRENT_TIME), &error) == 0 {
            throw GLibError(error)
        }
    }
}

/// A GError, turned into text and freed.
public struct GLibError: Error, CustomStringConvertible {
    public let description: String
    public let domain: UInt32
    public let code: Int32

    init(_ error: UnsafeMutablePointer<GError>?) {
        description = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
        domain = error?.pointee.domain ?? 0
        code = error?.pointee.code ?? 0
        if let error { g_error_free(error) }
    }
}

/// A GtkApplication: single instance per id, owns the main loop.
public final class Application: Object {
    public var application: UnsafeMutablePointer<GtkApplication> { cast(pointer) }

    public init(id: String) {
        super.init(adopting: gtk_application_new(id, G_APPLICATION_DEFAULT_FLAGS))
    }

    /// The first instance starts, or a second launch asks the running one to come forward.
    public func onActivate(_ handler: @escaping @MainActor () -> Void) { on("activate", handler) }

    private var actions: [Object] = []

    /// An action other processes can activate over D-Bus (`org.gtk.Actions`,
    /// see `RunningApplication`), with a string state they can read first.
    public func addAction(_ name: String, state: String, _ handler: @escaping @MainActor () -> Void) {
        let action = Object(adopting: UnsafeMutableRawPointer(g_simple_action_new_stateful(name, nil, g_variant_new_string(state))))
        action.onIgnoringArgument("activate", handler)
        g_action_map_add_action(OpaquePointer(pointer), OpaquePointer(action.pointer))
        actions.append(action)
    }

    /// Runs the main loop until the last window closes; returns the exit status.
    public func run(arguments: [String]) -> Int32 {
        // GApplication reads only argv[0] here; our own options were parsed already.
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup(arguments.first ?? "latchkey"), nil]
        defer { argv.forEach { free($0) } }
        return g_application_run(cast(pointer), 1, &argv)
    }

    public static func setName(_ name: String, programName: String) {
        g_set_application_name(name)
        g_set_prgname(programName)
    }
}
