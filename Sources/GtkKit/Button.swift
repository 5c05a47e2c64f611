import CGtk

public final class Button: Widget {
    public init(label: String) {
        super.init(gtk_button_new_with_label(label))
    }

    /// A button showing only an icon; give it an accessible name and a tooltip.
    public init(iconName: String) {
        super.init(gtk_button_new_from_icon_name(iconName, GTK_ICON_SIZE_BUTTON))
    }

    public var label: String {
        get { gtk_button_get_label(cast(widget)).map { String(cString: $0) } ?? "" }
        set { gtk_button_set_label(cast(widget), newValue) }
    }

    public func onClicked(_ handler: @escaping @MainActor () -> Void) { on("clicked", handler) }

    /// Lets a long label (a URL) shrink with an ellipsis instead of widening the window.
    public func ellipsizeLabel() {
        if let child = gtk_bin_get_child(cast(widget)), g_type_check_instance_is_a(cast(child), gtk_label_get_type()) != 0 {
            gtk_label_set_ellipsize(cast(child), PANGO_ELLIPSIZE_MIDDLE)
        }
    }
}
