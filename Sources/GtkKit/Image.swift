import CGtk

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
