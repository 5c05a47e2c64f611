import CGtk
import GioKit

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

    /// For `Dialog`.
    init(dialogTitled title: String) {
        super.init(gtk_dialog_new())
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

    /// Centred on the screen: a window with no parent of its own (`latchkey token`'s sign-in).
    public func center() {
        gtk_window_set_position(window, GTK_WIN_POS_CENTER)
    }

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

    /// Fixed at its content's natural size: a question whose wrapped lines would otherwise leave space below.
    public func setResizable(_ resizable: Bool) { gtk_window_set_resizable(window, resizable ? 1 : 0) }

    /// Above other windows: a question from a program with no window of its own.
    public func keepAbove() { gtk_window_set_keep_above(window, 1) }

    /// A dialog to the window manager (no minimise or maximise).
    public func markAsDialog() { gtk_window_set_type_hint(window, GDK_WINDOW_TYPE_HINT_DIALOG) }

    /// The button Enter presses (in a field that `activatesDefault`).
    public func setDefault(_ button: Button) {
        gtk_widget_set_can_default(button.widget, 1)
        gtk_window_set_default(window, button.widget)
    }

    /// The close button or Alt+F4. Return true to keep the window open.
    public func onCloseRequest(_ handler: @escaping @MainActor () -> Bool) { onBool("delete-event", handler) }

    /// Opens `uri` with the desktop's default handler (GIO: mimeapps.list and .desktop files).
    public func showURI(_ uri: String) throws {
        try Self.showURI(uri, over: self)
    }

    /// Opens `uri` in the person's default handler, over `parent` when there is one
    /// (a command that shows no window of its own has none).
    public static func showURI(_ uri: String, over parent: Window?) throws {
        var error: UnsafeMutablePointer<GError>?
        if gtk_show_uri_on_window(parent?.window, uri, guint32(GDK_CURRENT_TIME), &error) == 0 {
            throw GLibError(error)
        }
    }
}

/// A GtkDialog: modal over its parent, its buttons in the action area, and
/// Escape (the "close" keybinding) as well as the title bar's close run `onDismiss`.
public final class Dialog: Window {
    public init(title: String, over parent: Window) {
        super.init(dialogTitled: title)
        makeModal(over: parent)
    }

    private var dialog: UnsafeMutablePointer<GtkDialog> { cast(pointer) }

    /// The box above the buttons, where the form goes.
    public func setContent(_ child: Widget) {
        gtk_container_add(cast(gtk_dialog_get_content_area(dialog)), child.widget)
    }

    /// A button in the action area, in the order added.
    public func addButton(_ button: Button) {
        gtk_dialog_add_action_widget(dialog, button.widget, GTK_RESPONSE_NONE.rawValue)
    }

    /// Escape or the window's close: the person walked away from the dialog.
    public func onDismiss(_ handler: @escaping @MainActor () -> Void) {
        on("close", handler)
        onCloseRequest {
            handler()
            return true
        }
    }
}
