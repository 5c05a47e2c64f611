import CGtk

public final class ProgressBar: Widget {
    public init() { super.init(gtk_progress_bar_new()) }

    public var fraction: Double {
        get { gtk_progress_bar_get_fraction(cast(widget)) }
        set { gtk_progress_bar_set_fraction(cast(widget), newValue) }
    }
}
