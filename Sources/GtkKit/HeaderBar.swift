import CGtk

public final class HeaderBar: Widget {
    public init(title: String, subtitle: String? = nil, closeButton: Bool = true) {
        super.init(gtk_header_bar_new())
        gtk_header_bar_set_title(cast(widget), title)
        gtk_header_bar_set_subtitle(cast(widget), subtitle)
        gtk_header_bar_set_show_close_button(cast(widget), closeButton ? 1 : 0)
    }

    public var title: String {
        get { gtk_header_bar_get_title(cast(widget)).map { String(cString: $0) } ?? "" }
        set { gtk_header_bar_set_title(cast(widget), newValue) }
    }

    public var subtitle: String {
        get { gtk_header_bar_get_subtitle(cast(widget)).map { String(cString: $0) } ?? "" }
        set { gtk_header_bar_set_subtitle(cast(widget), newValue) }
    }

    public func packStart(_ child: Widget) { gtk_header_bar_pack_start(cast(widget), child.widget) }
    public func packEnd(_ child: Widget) { gtk_header_bar_pack_end(cast(widget), child.widget) }
}
