import CGio
import Foundation
import GioKit
import GtkKit
import Testing

/// A call to an exported object is answered exactly once, even by code that forgot to: its caller is
/// told at once rather than left to wait out its timeout.
@Suite struct DBusExportTests {
    static let xml = """
        <node><interface name="io.github.latchkey.Test1"><method name="Dropped"/><method name="Twice"><arg name="said" type="s" direction="out"/></method></interface></node>
        """

    @MainActor @Test func aCallReleasedUnansweredIsAnsweredWithAnError() throws {
        let bus = try SessionBus.shared().get()
        let path = "/io/github/latchkey/Test\(getpid())"
        let export = try DBusExport(connection: bus, path: path, interfaceXML: Self.xml) { call in
            if call.method == "Twice" {
                call.reply([.string("first")])
                call.reply([.string("second")])
            }
            // "Dropped": released here without an answer.
        }
        defer { export.unregister() }
        let dropped = Self.call(bus, path, "Dropped")
        #expect(dropped.error?.contains("dropped without an answer") == true, "\(dropped)")
        #expect(dropped.seconds < 10, "answered when it was released, not at the caller's timeout")
        let twice = Self.call(bus, path, "Twice")
        #expect(twice.error == nil && twice.reply == "('first',)", "\(twice)")
    }

    /// A call to `method` made from a thread of its own, while this thread turns GLib's loop (where the
    /// object's calls are handled); the reply as GVariant text, or GLib's error message.
    @MainActor private static func call(
        _ bus: OpaquePointer, _ path: String, _ method: String
    ) -> (reply: String?, error: String?, seconds: Double) {
        final class Outcome: @unchecked Sendable {
            // Written by the calling thread before `done`, read after it.
            var reply: String?
            var error: String?
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        let name = String(cString: g_dbus_connection_get_unique_name(bus))
        let started = Date()
        let connection = UInt(bitPattern: bus)
        Thread.detachNewThread {
            var error: UnsafeMutablePointer<GError>?
            let reply = g_dbus_connection_call_sync(
                OpaquePointer(bitPattern: connection), name, path, "io.github.latchkey.Test1", method, nil, nil,
                G_DBUS_CALL_FLAGS_NONE, 20_000, nil, &error)
            if let reply {
                let text = g_variant_print(reply, 0)
                outcome.reply = text.map { String(cString: $0) }
                g_free(text)
                g_variant_unref(reply)
            }
            if let error {
                outcome.error = String(cString: error.pointee.message)
                g_error_free(error)
            }
            outcome.done.signal()
            g_main_context_wakeup(nil)  // the loop below may be waiting for an event of its own
        }
        while outcome.done.wait(timeout: .now()) == .timedOut { g_main_context_iteration(nil, 1) }
        return (outcome.reply, outcome.error, Date().timeIntervalSince(started))
    }
}
