import CGtk

/// A GApplication that is a D-Bus service (`G_APPLICATION_IS_SERVICE`): no
/// window and no GTK of its own, one per session (the bus name says which), and
/// what the bus starts when a client asks for its name (D-Bus activation). GTK
/// is initialised only when a window is first needed (`Display.open`), so the
/// service also runs where there is no display.
@MainActor
public final class ServiceApplication: Object {
    private var application: UnsafeMutablePointer<GApplication> { cast(pointer) }

    public init(id: String) {
        super.init(adopting: g_application_new(id, G_APPLICATION_IS_SERVICE))
    }

    /// Why registering failed.
    public enum Refusal: Error, CustomStringConvertible {
        /// Another process holds the name: this session's service runs already.
        case running
        /// No session bus to register on (or it refused): GLib's reason.
        case noBus(String)

        public var description: String {
            switch self {
            case .running: "another instance runs in this session"
            case .noBus(let reason): reason
            }
        }
    }

    /// Takes the bus name.
    public func register() throws(Refusal) {
        var error: UnsafeMutablePointer<GError>?
        guard g_application_register(application, nil, &error) != 0 else {
            let failure = GLibError(error)
            // GIO says "Unable to acquire bus name" when the name is taken: GIO_ERROR_FAILED, no better code.
            throw failure.description.contains("acquire bus name") ? .running : .noBus(failure.description)
        }
    }

    /// The session bus connection the name is held on (after `register`).
    public var connection: OpaquePointer? { g_application_get_dbus_connection(application) }

    /// Keeps the service running with nothing to do (an agent waits for its callers).
    public func hold() { g_application_hold(application) }

    /// Runs the main loop until `quit`.
    public func run() -> Int32 {
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("latchkey"), nil]
        defer { for argument in argv { free(argument) } }
        return g_application_run(application, 1, &argv)
    }

    public func quit() { g_application_quit(application) }
}

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
