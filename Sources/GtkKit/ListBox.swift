import CGtk

/// A GtkListBox of rows, each known by an id: one row chosen at a time, as GNOME Settings lists
/// accounts. The row wrappers are kept here (their children are the container's), so that a row
/// found by its pointer gives back its id.
public final class ListBox: Widget {
    private var rows: [(id: String, row: Widget)] = []

    public init() {
        super.init(gtk_list_box_new())
        gtk_list_box_set_selection_mode(cast(widget), GTK_SELECTION_SINGLE)
    }

    /// The ids of the rows, in order.
    public var ids: [String] { rows.map(\.id) }

    /// Adds a row showing `content`, called `name` by a screen reader.
    public func append(id: String, content: Widget, name: String, description: String? = nil) {
        let row = Widget(gtk_list_box_row_new())
        gtk_container_add(cast(row.widget), content.widget)
        row.setAccessible(name: name, description: description)
        gtk_container_add(cast(widget), row.widget)
        row.showAll()
        rows.append((id, row))
    }

    /// Empties the list.
    public func removeAll() {
        let old = rows
        rows = []
        for (_, row) in old { row.destroy() }
    }

    /// The chosen row's id; setting one that is not there chooses none.
    public var selectedID: String? {
        get {
            guard let selected = gtk_list_box_get_selected_row(cast(widget)) else { return nil }
            let pointer = UnsafeMutableRawPointer(selected)
            return rows.first { UnsafeMutableRawPointer($0.row.widget) == pointer }?.id
        }
        set {
            if let row = rows.first(where: { $0.id == newValue }) {
                gtk_list_box_select_row(cast(widget), cast(row.row.widget))
            } else {
                gtk_list_box_unselect_all(cast(widget))
            }
        }
    }

    /// Runs when the person (or `selectedID`) chooses another row, with its id.
    public func onSelected(_ handler: @escaping @MainActor (String) -> Void) {
        onIgnoringArgument("row-selected") { [weak self] in
            if let id = self?.selectedID { handler(id) }
        }
    }
}
