import CGtk

/// A GtkRadioButton: one of a group, of which exactly one is active.
public final class RadioButton: Widget {
    /// The first of a group, or one more in `group`.
    public init(label: String, joining group: RadioButton? = nil) {
        super.init(gtk_radio_button_new_with_label_from_widget(group.map { cast($0.widget) }, label))
    }

    public var isActive: Bool {
        get { gtk_toggle_button_get_active(cast(widget)) != 0 }
        set { gtk_toggle_button_set_active(cast(widget), newValue ? 1 : 0) }
    }

    /// Runs when the button becomes active or inactive, by a click or by `isActive`.
    public func onToggled(_ handler: @escaping @MainActor () -> Void) { on("toggled", handler) }
}
