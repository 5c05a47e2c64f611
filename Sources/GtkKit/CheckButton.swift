import CGtk

/// A GtkCheckButton: a box a person ticks, with its label.
public final class CheckButton: Widget {
    public init(label: String) {
        super.init(gtk_check_button_new_with_label(label))
    }

    public var isActive: Bool {
        get { gtk_toggle_button_get_active(cast(widget)) != 0 }
        set { gtk_toggle_button_set_active(cast(widget), newValue ? 1 : 0) }
    }
}
