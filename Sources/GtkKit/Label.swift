import CGtk

public final class Label: Widget {
    public init(_ text: String = "", wrap: Bool = false, selectable: Bool = false) {
        super.init(gtk_label_new(text))
        gtk_label_set_line_wrap(cast(widget), wrap ? 1 : 0)
        gtk_label_set_selectable(cast(widget), selectable ? 1 : 0)
        gtk_label_set_xalign(cast(widget), 0)
    }

    public var text: String {
        get { String(cString: gtk_label_get_text(cast(widget))) }
        set { gtk_label_set_text(cast(widget), newValue) }
    }

    /// Wraps at about `count` characters instead of widening the window.
    public func setMaximumWidth(characters count: Int32) { gtk_label_set_max_width_chars(cast(widget), count) }

    public func setMarkup(_ markup: String) { gtk_label_set_markup(cast(widget), markup) }

    /// Text that may contain anything, made safe for Pango markup.
    public nonisolated static func escape(_ text: String) -> String {
        guard let escaped = g_markup_escape_text(text, -1) else { return "" }
        defer { g_free(escaped) }
        return String(cString: escaped)
    }
}
