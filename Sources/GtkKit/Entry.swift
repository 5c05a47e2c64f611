import CGtk

/// A one-line text field.
public final class Entry: Widget {
    /// - Parameter hidden: shows bullets instead of the text (a secret).
    public init(text: String = "", placeholder: String? = nil, hidden: Bool = false) {
        super.init(gtk_entry_new())
        self.text = text
        if let placeholder { gtk_entry_set_placeholder_text(cast(widget), placeholder) }
        if hidden {
            gtk_entry_set_visibility(cast(widget), 0)
            gtk_entry_set_input_purpose(cast(widget), GTK_INPUT_PURPOSE_PASSWORD)
        }
        gtk_widget_set_hexpand(widget, 1)
    }

    public var text: String {
        get { String(cString: gtk_entry_get_text(cast(widget))) }
        set { gtk_entry_set_text(cast(widget), newValue) }
    }

    public var placeholder: String {
        get { gtk_entry_get_placeholder_text(cast(widget)).map { String(cString: $0) } ?? "" }
        set { gtk_entry_set_placeholder_text(cast(widget), newValue) }
    }

    /// Shown, selectable and copyable, but not typed into.
    public var isEditable: Bool {
        get { gtk_editable_get_editable(OpaquePointer(widget)) != 0 }
        set { gtk_editable_set_editable(OpaquePointer(widget), newValue ? 1 : 0) }
    }

    /// Enter in this field presses the window's default button.
    public func activatesDefault() { gtk_entry_set_activates_default(cast(widget), 1) }

    public func onChanged(_ handler: @escaping @MainActor () -> Void) { on("changed", handler) }
}

/// Children in rows and columns.
public final class Grid: Widget {
    public init(rowSpacing: UInt32, columnSpacing: UInt32) {
        super.init(gtk_grid_new())
        gtk_grid_set_row_spacing(cast(widget), rowSpacing)
        gtk_grid_set_column_spacing(cast(widget), columnSpacing)
    }

    public func attach(_ child: Widget, column: Int32, row: Int32, width: Int32 = 1) {
        gtk_grid_attach(cast(widget), child.widget, column, row, width, 1)
    }
}

/// The desktop's clipboard (the one Ctrl+V pastes from).
public enum Clipboard {
    @MainActor public static func copy(_ text: String) {
        gtk_clipboard_set_text(gtk_clipboard_get(gdk_atom_intern("CLIPBOARD", 0)), text, -1)
    }

    /// The clipboard's text, asked of its owner (which may be another program); nil when it holds none.
    @MainActor public static var text: String? {
        guard let text = gtk_clipboard_wait_for_text(gtk_clipboard_get(gdk_atom_intern("CLIPBOARD", 0))) else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }
}
