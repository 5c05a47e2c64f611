import CGtk

/// A GtkWidget, with the few things every control needs: visibility,
/// sensitivity, an accessible name, CSS classes.
open class Widget: Object {
    public var widget: UnsafeMutablePointer<GtkWidget> { cast(pointer) }

    public func show() { gtk_widget_show(widget) }
    public func showAll() { gtk_widget_show_all(widget) }
    public func hide() { gtk_widget_hide(widget) }

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
}

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

    public func setMarkup(_ markup: String) { gtk_label_set_markup(cast(widget), markup) }

    /// Text that may contain anything, made safe for Pango markup.
    public nonisolated static func escape(_ text: String) -> String {
        guard let escaped = g_markup_escape_text(text, -1) else { return "" }
        defer { g_free(escaped) }
        return String(cString: escaped)
    }
}

public final class Button: Widget {
    public init(label: String) {
        super.init(gtk_button_new_with_label(label))
    }

    public var label: String {
        get { gtk_button_get_label(cast(widget)).map { String(cString: $0) } ?? "" }
        set { gtk_button_set_label(cast(widget), newValue) }
    }

    public func onClicked(_ handler: @escaping @MainActor () -> Void) { on("clicked", handler) }

    /// Lets a long label (a URL) shrink with an ellipsis instead of widening the window.
    public func ellipsizeLabel() {
        if let child = gtk_bin_get_child(cast(widget)), g_type_check_instance_is_a(cast(child), gtk_label_get_type()) != 0 {
            gtk_label_set_ellipsize(cast(child), PANGO_ELLIPSIZE_MIDDLE)
        }
    }
}

public final class Spinner: Widget {
    public init() { super.init(gtk_spinner_new()) }

    public func setSpinning(_ spinning: Bool) {
        spinning ? gtk_spinner_start(cast(widget)) : gtk_spinner_stop(cast(widget))
    }
}

public final class ProgressBar: Widget {
    public init() { super.init(gtk_progress_bar_new()) }

    public var fraction: Double {
        get { gtk_progress_bar_get_fraction(cast(widget)) }
        set { gtk_progress_bar_set_fraction(cast(widget), newValue) }
    }
}

public final class Image: Widget {
    /// A themed icon; `pixelSize` overrides the button-sized default.
    public init(iconName: String, pixelSize: Int32? = nil) {
        super.init(gtk_image_new_from_icon_name(iconName, GTK_ICON_SIZE_BUTTON))
        if let pixelSize { gtk_image_set_pixel_size(cast(widget), pixelSize) }
    }

    public func setIcon(_ name: String) {
        gtk_image_set_from_icon_name(cast(widget), name, GTK_ICON_SIZE_BUTTON)
    }

    /// Shows image data (PNG, JPEG, SVG …) scaled to `size` pixels; false if it cannot be read.
    @discardableResult
    public func setPicture(_ bytes: [UInt8], size: Int32) -> Bool {
        guard let loader = gdk_pixbuf_loader_new() else { return false }
        defer { g_object_unref(loader) }
        gdk_pixbuf_loader_set_size(loader, size, size)
        var error: UnsafeMutablePointer<GError>?
        let written = bytes.withUnsafeBufferPointer { gdk_pixbuf_loader_write(loader, $0.baseAddress, gsize($0.count), &error) }
        if let error { g_error_free(error) }
        var closeError: UnsafeMutablePointer<GError>?
        let closed = gdk_pixbuf_loader_close(loader, &closeError)
        if let closeError { g_error_free(closeError) }
        guard written != 0, closed != 0, let pixbuf = gdk_pixbuf_loader_get_pixbuf(loader) else { return false }
        gtk_image_set_from_pixbuf(cast(widget), pixbuf)
        return true
    }
}

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

    public func packStart(_ child: Widget) { gtk_header_bar_pack_start(cast(widget), child.widget) }
    public func packEnd(_ child: Widget) { gtk_header_bar_pack_end(cast(widget), child.widget) }
}
