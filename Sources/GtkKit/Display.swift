import CGtk

/// The display, opened when a window is first needed by a program that started without one.
@MainActor
public enum Display {
    private static var opened: Bool?

    /// Whether GTK could be initialised on this thread (once; the answer is kept). False at once
    /// when the environment names no display, without GTK's warning.
    public static func open(environment: [String: String]) -> Bool {
        if let opened { return opened }
        let named = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { $0?.isEmpty == false }
        let result = named && gtk_init_check(nil, nil) != 0
        opened = result
        return result
    }
}
