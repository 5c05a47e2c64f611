import Foundation
import TestSupport
import Testing

/// What a broken connection's failure says of the port: the kernel's own list, read right.
@Suite struct PortSocketsTests {
    @Test func aListenerOfThisProcessIsNamedAsSuch() throws {
        let held = try #require(HeldPort(listening: true))
        let said = PortSockets.describe(port: held.port)
        #expect(said == "127.0.0.1:\(held.port) → 0.0.0.0:0 LISTEN, held by this process", "\(said)")
        withExtendedLifetime(held) {}
    }

    @Test func aConnectionWaitingOnTheListenerIsListedBesideIt() async throws {
        let held = try #require(HeldPort(listening: true))
        // Another process's connection, waiting in the listener's backlog (never accepted).
        let script = "import socket,sys,time; s=socket.create_connection(('127.0.0.1', int(sys.argv[1]))); time.sleep(60)"
        let child = try Spawned("/usr/bin/python3", ["-c", script, "\(held.port)"])
        defer { child.kill() }
        // The child's connection shows once it is made.
        try await waitUntil { PortSockets.describe(port: held.port).contains("ESTABLISHED") }
        let said = PortSockets.describe(port: held.port)
        #expect(said.contains("127.0.0.1:\(held.port) → 0.0.0.0:0 LISTEN, held by this process"), "\(said)")
        #expect(said.contains("→ 127.0.0.1:\(held.port) ESTABLISHED, not held by this process"), "\(said)")
        withExtendedLifetime(held) {}
    }
}
