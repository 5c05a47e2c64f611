import CGtk

public final class Spinner: Widget {
    public init() { super.init(gtk_spinner_new()) }

    public func setSpinning(_ spinning: Bool) {
        spinning ? gtk_spinner_start(cast(widget)) : gtk_spinner_stop(cast(widget))
    }
}
