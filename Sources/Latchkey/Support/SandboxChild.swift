import FoundationEssentials
import InstallLayout
import LatchkeyCore
import LatchkeyServices
import Logging
import Loopback
import OAuthCore

#if canImport(Glibc)
    import Glibc
#endif

/// The offline provider, started as a child on a free loopback port. Its
/// standard input is a pipe only this process holds: when Latchkey ends, by
/// quitting or by crashing, the pipe closes and the sandbox exits too.
///
/// Latchkey picks the port itself, so the provider's address is known at once,
/// but the child is started only by the first `waitUntilReady()`: off GTK's
/// thread, after the window is up, before anything touches the network. A
/// launch measured to the window does not pay for spawning a second Swift
/// program, nor share its two cores with one starting up (`make bench`).
/// Started with `posix_spawn`, not Foundation's `Process`, whose `run()` on Linux
/// reads past a buffer now and then (swift-corelibs-foundation #5472): the child
/// gets its two pipes and this process's standard error, nothing else.
/// Sendable: `readiness` is used only under `lock`, `phase` and `pid` only under
/// `phaseLock`; the rest is set once, in `init`.
final class SandboxChild: @unchecked Sendable {
    let baseURL: String
    private let executable: URL
    private let arguments: [String]
    /// The child's standard input and output: each pipe's two ends (read, write), close-on-exec;
    /// -1 once closed here (under `phaseLock`).
    private var input: (read: Int32, write: Int32)
    private var output: (read: Int32, write: Int32)
    private var pid: pid_t?
    /// One `waitUntilReady` at a time: it starts the child and reads its first line.
    private let lock = Lock()
    /// Held by `stop()` until the child is gone: no start follows a stop, and
    /// a second stop waits for the first to finish its SIGTERM and SIGKILL.
    private let phaseLock = Lock()
    private var phase = Phase.notStarted
    private var readiness: Result<Void, OAuthError>?

    private enum Phase { case notStarted, started, stopped }

    /// The port, held from the moment its number is known until the child listens on it (or
    /// will not): released by `startAndReadFirstLine`, under `lock`, or with this value.
    private let reservation: ReservedPort

    private init(executable: URL, reservation: ReservedPort, stateFile: URL) throws {
        baseURL = "http://127.0.0.1:\(reservation.port)"
        self.executable = executable
        self.reservation = reservation
        arguments = ["--port", String(reservation.port), "--exit-with-stdin", "--state-file", stateFile.path]
        input = try Self.pipe()
        output = try Self.pipe()
    }

    deinit {
        for fd in [input.read, input.write, output.read, output.write] where fd >= 0 { close(fd) }
    }

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipeClosedOnExec(&fds, O_CLOEXEC) == 0 else { throw OAuthError.invalidConfiguration("no pipe for the sandbox provider.") }
        return (fds[0], fds[1])
    }

    /// Starts the child unless `stop()` came first; false when it did.
    private func launch() throws -> Bool {
        try phaseLock.withLock {
            guard phase == .notStarted else { return phase == .started }
            pid = try spawn()
            phase = .started
            // Ours no more: the child has its copies, and end-of-file must come when it goes.
            close(input.read)
            close(output.write)
            (input.read, output.write) = (-1, -1)
            return true
        }
    }

    /// The child, its standard input and output the pipes' far ends, its standard error ours.
    private func spawn() throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        _ = spawnActionsCloseFrom(&actions, 3)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let result = withCleanSpawnAttributes { posix_spawn(&pid, executable.path, &actions, $0, argv, environ) }
        guard result == 0 else { throw OAuthError.invalidConfiguration(String(cString: strerror(result))) }
        return pid
    }

    /// The child's address, with the child itself not yet started (`waitUntilReady` starts it).
    static func prepare(logger: Logger) throws -> SandboxChild {
        guard let executable = locate() else {
            throw OAuthError.invalidConfiguration(
                "the offline sandbox provider (latchkey-sandbox) is neither next to latchkey nor on PATH. Use --provider to sign in to a real provider."
            )
        }
        // Grants and tokens the sandbox issued survive its restarts, as a real provider's would.
        let directory = LatchkeyFiles.stateDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let child = try SandboxChild(
            executable: executable, reservation: try reservePort(), stateFile: directory.appendingPathComponent("sandbox-provider.json"))
        logger.info("Sandbox provider (offline demo) at \(child.baseURL)")
        return child
    }

    /// How long the child may take to say it listens.
    static let readinessLimit: TimeInterval = 10

    /// Starts the child if it has not started, then blocks until it listens (at
    /// most `readinessLimit`); the same answer on every call.
    func waitUntilReady() throws {
        try lock.withLock {
            let result = readiness ?? startAndReadFirstLine()
            readiness = result
            try result.get()
        }
    }

    private func startAndReadFirstLine() -> Result<Void, OAuthError> {
        let stopped = OAuthError.invalidConfiguration("the offline sandbox provider was stopped.")
        do {
            guard try launch() else { return .failure(stopped) }
        } catch {
            return .failure(.invalidConfiguration("the offline sandbox provider could not be started: \(error)"))
        }
        let (text, timedOut) = Self.firstLine(of: output.read, within: Self.readinessLimit)
        // Listening, the child holds the port itself; not, nobody will.
        reservation.release()
        if text == "listening \(baseURL)" { return .success(()) }
        if timedOut {
            // Alive but silent: stop it, or it would hold its port and our pipe for nothing.
            stop()
            return .failure(
                .invalidConfiguration(
                    "the offline sandbox provider did not answer within \(Int(Self.readinessLimit)) seconds. Quit and start Latchkey again, or use --provider."
                ))
        }
        // Quitting stopped it while it started: its output closed, and that is no fault of its own.
        if phaseLock.withLock({ phase == .stopped }) { return .failure(stopped) }
        return .failure(
            .invalidConfiguration(
                "the offline sandbox provider did not start (it said: \(text.isEmpty ? "nothing" : text)); see its messages above."))
    }

    /// Reads up to the first newline, waiting with poll(2) so the limit holds even
    /// when the other side never writes (a blocking read would wait forever).
    static func firstLine(of fd: Int32, within limit: TimeInterval) -> (text: String, timedOut: Bool) {
        var line = [UInt8]()
        let deadline = Date().addingTimeInterval(limit)
        var buffer = [UInt8](repeating: 0, count: 256)
        while !line.contains(UInt8(ascii: "\n")) {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return (decode(line), true) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if ready == 0 { continue }
            let count = read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }  // the child closed its end: it has exited
            line += buffer[0..<count]
        }
        return (decode(line), false)
    }

    private static func decode(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self).trimmed()
    }

    /// Closes its input and ends it, waiting a bounded time: the quit (on GTK's
    /// thread) must not hang on a child that does not go.
    func stop() {
        phaseLock.withLock {
            let running = phase == .started
            phase = .stopped
            guard running, let pid, !Self.reaped(pid, within: 0) else { return }
            close(input.write)
            input.write = -1
            kill(pid, SIGTERM)
            if !Self.reaped(pid, within: 2) {
                kill(pid, SIGKILL)
                _ = Self.reaped(pid, within: 2)
            }
        }
    }

    /// Whether the child ended within `seconds` (reaped here).
    private static func reaped(_ pid: pid_t, within seconds: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result == -1 && errno == ECHILD) { return true }
            usleep(5_000)
        } while Date() < deadline
        return false
    }

    /// A port on 127.0.0.1 held for the child until it listens (`ReservedPort` says how).
    private static func reservePort() throws -> ReservedPort {
        guard let reservation = ReservedPort() else {
            throw OAuthError.invalidConfiguration("no free loopback port for the sandbox provider.")
        }
        return reservation
    }

    /// Beside the app in a build, in `<prefix>/lib/latchkey` installed, else on PATH.
    private static func locate() -> URL? {
        let layout = InstallLayout.current
        for candidate in [layout.beside("latchkey-sandbox"), layout.lib("latchkey/latchkey-sandbox")]
        where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("latchkey-sandbox")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
