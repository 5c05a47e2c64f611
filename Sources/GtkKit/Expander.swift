import CGtk

/// A label that shows or hides what it holds when pressed (collapsed at first).
public final class Expander: Widget {
    public init(_ label: String) {
        super.init(gtk_expander_new(label))
    }

    public func setChild(_ child: Widget) { gtk_container_add(cast(widget), child.widget) }
}

/// A view that scrolls what it holds once it is taller than `maximumHeight` pixels, and is only as
/// tall as that needs otherwise; never wider than its place.
public final class ScrolledWindow: Widget {
    public init(maximumHeight: Int32) {
        super.init(gtk_scrolled_window_new(nil, nil))
        gtk_scrolled_window_set_policy(cast(widget), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_propagate_natural_height(cast(widget), 1)
        gtk_scrolled_window_set_max_content_height(cast(widget), maximumHeight)
    }

    public func setChild(_ child: Widget) { gtk_container_add(cast(widget), child.widget) }
}
