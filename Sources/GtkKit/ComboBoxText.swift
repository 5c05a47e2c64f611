import CGtk

/// A GtkComboBoxText: a drop-down of text entries, each with an id.
public final class ComboBoxText: Widget {
    public init() {
        super.init(gtk_combo_box_text_new())
    }

    public func append(id: String, text: String) { gtk_combo_box_text_append(cast(widget), id, text) }

    /// Empties the list (and so chooses none).
    public func removeAll() { gtk_combo_box_text_remove_all(cast(widget)) }

    /// The id of the chosen entry; setting an id that is not there chooses none.
    public var activeID: String? {
        get { gtk_combo_box_get_active_id(cast(widget)).map { String(cString: $0) } }
        set { gtk_combo_box_set_active_id(cast(widget), newValue) }
    }

    /// Runs when the chosen entry changes, by the person or by `activeID`.
    public func onChanged(_ handler: @escaping @MainActor () -> Void) { on("changed", handler) }
}
