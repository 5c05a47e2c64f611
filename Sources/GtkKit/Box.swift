import CGtk

public final class Box: Widget {
    public init(vertical: Bool, spacing: Int32) {
        super.init(gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing))
    }

    public func append(_ child: Widget, expand: Bool = false) {
        gtk_box_pack_start(cast(widget), child.widget, expand ? 1 : 0, expand ? 1 : 0, 0)
    }

    public func appendAtEnd(_ child: Widget) {
        gtk_box_pack_end(cast(widget), child.widget, 0, 0, 0)
    }
}
