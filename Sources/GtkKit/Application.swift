import CGio
import CGtk
import GioKit

/// A GtkApplication: single instance per id, owns the main loop.
public final class Application: Object {
    public var application: UnsafeMutablePointer<GtkApplication> { cast(pointer) }

    public init(id: String) {
        super.init(adopting: gtk_application_new(id, G_APPLICATION_DEFAULT_FLAGS))
    }

    /// The first instance starts, or a second launch asks the running one to come forward.
    public func onActivate(_ handler: @escaping @MainActor () -> Void) { on("activate", handler) }

    private var actions: [Object] = []

    /// An action other processes can activate over D-Bus (`org.gtk.Actions`,
    /// see `RunningApplication`) with a string parameter, and a string state
    /// they can read first. The parameter travels with the activation itself,
    /// so it still says what the caller meant if the state changed in between.
    public func addAction(_ name: String, state: String, _ handler: @escaping @MainActor (String) -> Void) {
        let action = Object(
            adopting: UnsafeMutableRawPointer(
                g_simple_action_new_stateful(name, latchkey_variant_type_string(), g_variant_new_string(state))))
        let trampoline: @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> Void = { _, parameter, data in
            let handler = signalHandler(data, (@MainActor (String) -> Void).self)
            // GAction checked the parameter's type ("s") before emitting.
            let value = parameter.map { String(cString: g_variant_get_string($0, nil)) } ?? ""
            GtkThread.assumeIsolated { handler(value) }
        }
        action.connect("activate", unsafeBitCast(trampoline, to: GCallback.self), handler)
        g_action_map_add_action(OpaquePointer(pointer), OpaquePointer(action.pointer))
        actions.append(action)
    }

    /// Changes the state other processes read before they activate `name`.
    public func setActionState(_ name: String, _ state: String) {
        guard let action = g_action_map_lookup_action(OpaquePointer(pointer), name) else { return }
        g_simple_action_set_state(action, g_variant_new_string(state))
    }

    /// Runs the main loop until the last window closes; returns the exit status.
    public func run(arguments: [String]) -> Int32 {
        // GApplication reads only argv[0] here; our own options were parsed already.
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup(arguments.first ?? "latchkey"), nil]
        defer { for argument in argv { free(argument) } }
        return g_application_run(cast(pointer), 1, &argv)
    }

    public static func setName(_ name: String, programName: String) {
        PlainLoop.setName(name, programName: programName)
    }
}
