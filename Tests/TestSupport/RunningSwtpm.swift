import Foundation
import OAuthCore

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's software TPM 2.0 (`swtpm`), for one test: its command and control sockets are bound and
/// listened on here, then handed to it, so a connection made at once waits for it to answer instead
/// of being refused while it starts; nothing polls. Killed when the test lets go of it (or `stop()`),
/// its state kept in a directory of its own, so that one started again on it is the same TPM.
public final class RunningSwtpm: @unchecked Sendable {
    public let directory: URL
    public var tpm: TPM { TPM(tcti: "swtpm:path=\(directory.path)/sock") }
    private var process: Spawned?

    /// Where swtpm is, when this machine has it (`make test` installs it).
    public static var installed: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm") }

    /// A new TPM; `directory`: one that held a TPM before (`start(again:)`), the same TPM again.
    public static func start(in directory: URL? = nil) throws -> RunningSwtpm {
        // A short path: a unix socket's name is at most 107 bytes.
        let directory = directory ?? URL(fileURLWithPath: "/tmp/swtpm-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let running = RunningSwtpm(directory: directory)
        try running.launch()
        return running
    }

    private init(directory: URL) { self.directory = directory }

    private func launch() throws {
        let command = try Self.listening(at: directory.path + "/sock")
        let control = try Self.listening(at: directory.path + "/sock.ctrl")
        defer {
            close(command)
            close(control)
        }
        let log = open(directory.path + "/log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer { close(log) }
        process = try Spawned(
            "/usr/bin/swtpm",
            [
                "socket", "--tpm2", "--tpmstate", "dir=\(directory.path)", "--server", "type=unixio,fd=3", "--ctrl", "type=unixio,fd=4",
                "--flags", "not-need-init,startup-clear",
            ], output: log, errors: log, handed: [3: command, 4: control])
    }

    /// A unix socket bound at `path` and listened on (what was there before, removed).
    private static func listening(at path: String) throws -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard fd >= 0, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw SandboxTestError("no socket for swtpm") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw SandboxTestError("swtpm's socket \(path) could not be bound: \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// Gone at once, as a TPM that went away: what it held stays in its directory.
    public func stop() async {
        await process?.end()
        process = nil
        unlink(directory.path + "/sock")
        unlink(directory.path + "/sock.ctrl")
    }

    /// The same TPM again (its state), after `stop()`.
    public func startAgain() throws { try launch() }

    deinit {
        process?.kill()
        try? FileManager.default.removeItem(at: directory)
    }
}
