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

    /// Shows grey pixels (`side` × `side`, one byte each, 0 black): a QR code, drawn square and sharp.
    public func setGreyPixels(_ bytes: [UInt8], side: Int32) {
        precondition(bytes.count == Int(side) * Int(side), "one byte a pixel")
        // GdkPixbuf takes RGB; each grey byte three times, rows packed (no padding: 3 × side bytes a row).
        var rgb = [UInt8]()
        rgb.reserveCapacity(bytes.count * 3)
        for grey in bytes { rgb += [grey, grey, grey] }
        let data = rgb.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        guard let pixbuf = gdk_pixbuf_new_from_bytes(data, GDK_COLORSPACE_RGB, 0, 8, side, side, side * 3) else { return }
        defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
        gtk_image_set_from_pixbuf(cast(widget), pixbuf)
    }
}
