import Foundation
import TestSupport
import Testing

/// What a broken connection's failure says of the port: the kernel's own list, read right.
/// The list is read a page at a time and other tests' sockets come and go meanwhile, so a line
/// may be missed in one reading: each check waits for a reading that has it.
@Suite struct PortSocketsTests {
    @Test func aListenerOfThisProcessIsNamedAsSuch() async throws {
        let held = try #require(HeldPort(listening: true))
        let line = "127.0.0.1:\(held.port) → 0.0.0.0:0 LISTEN, held by this process"
        try await waitUntil {
            PortSockets.describe(port: held.port).split(separator: ";").contains { $0.trimmingCharacters(in: .whitespaces) == line }
        }
        withExtendedLifetime(held) {}
    }

    @Test func aConnectionWaitingOnTheListenerIsListedBesideIt() async throws {
        let held = try #require(HeldPort(listening: true))
        // Another process's connection, waiting in the listener's backlog (never accepted).
        let script = "import socket,sys,time; s=socket.create_connection(('127.0.0.1', int(sys.argv[1]))); time.sleep(60)"
        let child = try Spawned("/usr/bin/python3", ["-c", script, "\(held.port)"])
        defer { child.kill() }
        try await waitUntil {
            let said = PortSockets.describe(port: held.port)
            return said.contains("127.0.0.1:\(held.port) → 0.0.0.0:0 LISTEN, held by this process")
                && said.contains("→ 127.0.0.1:\(held.port) ESTABLISHED, not held by this process")
        }
        withExtendedLifetime(held) {}
    }
}
