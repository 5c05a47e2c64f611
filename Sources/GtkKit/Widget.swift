import CGtk

/// A GtkWidget, with the few things every control needs: visibility,
/// sensitivity, an accessible name, CSS classes.
open class Widget: Object {
    public var widget: UnsafeMutablePointer<GtkWidget> { cast(pointer) }

    public func show() { gtk_widget_show(widget) }
    public func showAll() { gtk_widget_show_all(widget) }
    public func hide() { gtk_widget_hide(widget) }

    /// Left hidden by `showAll` (of this widget or a container around it), until shown by itself.
    public var isLeftOutOfShowAll: Bool {
        get { gtk_widget_get_no_show_all(widget) != 0 }
        set { gtk_widget_set_no_show_all(widget, newValue ? 1 : 0) }
    }

    public var isVisible: Bool {
        get { gtk_widget_get_visible(widget) != 0 }
        set { gtk_widget_set_visible(widget, newValue ? 1 : 0) }
    }

    public var isSensitive: Bool {
        get { gtk_widget_get_sensitive(widget) != 0 }
        set { gtk_widget_set_sensitive(widget, newValue ? 1 : 0) }
    }

    /// What a screen reader (and the end-to-end tests, through AT-SPI) call this control.
    public func setAccessible(name: String, description: String? = nil) {
        let accessible = gtk_widget_get_accessible(widget)
        atk_object_set_name(accessible, name)
        if let description { atk_object_set_description(accessible, description) }
    }

    public func setTooltip(_ text: String?) { gtk_widget_set_tooltip_text(widget, text) }

    public func addStyleClass(_ name: String) {
        gtk_style_context_add_class(gtk_widget_get_style_context(widget), name)
    }

    public func removeStyleClass(_ name: String) {
        gtk_style_context_remove_class(gtk_widget_get_style_context(widget), name)
    }

    public func setMargins(_ margin: Int32) {
        gtk_widget_set_margin_top(widget, margin)
        gtk_widget_set_margin_bottom(widget, margin)
        gtk_widget_set_margin_start(widget, margin)
        gtk_widget_set_margin_end(widget, margin)
    }

    public enum Alignment {
        case fill, start, end, center

        var gtk: GtkAlign {
            switch self {
            case .fill: GTK_ALIGN_FILL
            case .start: GTK_ALIGN_START
            case .end: GTK_ALIGN_END
            case .center: GTK_ALIGN_CENTER
            }
        }
    }

    public func setAlignment(horizontal: Alignment? = nil, vertical: Alignment? = nil) {
        if let horizontal { gtk_widget_set_halign(widget, horizontal.gtk) }
        if let vertical { gtk_widget_set_valign(widget, vertical.gtk) }
    }

    public func setExpand(horizontal: Bool = false, vertical: Bool = false) {
        gtk_widget_set_hexpand(widget, horizontal ? 1 : 0)
        gtk_widget_set_vexpand(widget, vertical ? 1 : 0)
    }

    public func destroy() { gtk_widget_destroy(widget) }

    /// Moves the keyboard focus here.
    public func grabFocus() { gtk_widget_grab_focus(widget) }
}
