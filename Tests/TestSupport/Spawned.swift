import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// glibc ≥ 2.34's way of closing every descriptor from one on in the child; the Glibc module does not import it.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func spawnActionsCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32

/// A child process started with `posix_spawn`, not Foundation's `Process`: on Linux, Swift
/// 6.3's `Process.run()` reads 256 bytes of every `/proc/self/fd` entry, past the end of
/// glibc's buffer, and now and then the whole test process dies of it (SIGSEGV in
/// `Process.run`, swift-corelibs-foundation #5472). The tests start a curl per HTTP request
/// and a sandbox per suite, so that was one run in five or six here. The child gets exactly
/// the descriptors named (0, 1, 2), nothing else of this process's.
public final class Spawned: @unchecked Sendable {
    public let processIdentifier: pid_t
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `path` with `arguments` and this process's environment; `input`, `output` and
    /// `errors` become its standard input, output and error (nil: /dev/null).
    public init(_ path: String, _ arguments: [String], input: Int32? = nil, output: Int32? = nil, errors: Int32? = nil) throws {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(null) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in [(input ?? null, Int32(0)), (output ?? null, 1), (errors ?? null, 2)] {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        _ = spawnActionsCloseFrom(&actions, 3)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard result == 0 else { throw SandboxTestError("\(path) could not be started: \(String(cString: strerror(result)))") }
        processIdentifier = pid
    }

    /// The exit status once the child has ended (128 + the signal for one killed); nil while it runs.
    public func poll() -> Int32? {
        lock.withLock {
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier else { return nil }
            // WIFEXITED ? WEXITSTATUS : 128 + WTERMSIG
            status = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            return status
        }
    }

    public var isRunning: Bool { poll() == nil }

    /// Blocks the calling thread until the child ends or `timeout` passes.
    @discardableResult
    public func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let status = poll() { return status }
            usleep(5_000)
        } while Date() < deadline
        return nil
    }

    /// Suspends the calling task until the child ends or `timeout` passes.
    public func exit(timeout: TimeInterval) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let status = poll() { return status }
            try? await Task.sleep(for: .milliseconds(5))
        } while Date() < deadline
        return nil
    }

    /// Runs `path` to its end and returns its exit status and what it wrote on standard output
    /// (its standard error goes to /dev/null); nil status when it did not end within `timeout`.
    public static func run(_ path: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> (status: Int32?, output: Data) {
        let pipe = Pipe().closedOnExec()
        let child = try Spawned(path, arguments, output: pipe.fileHandleForWriting.fileDescriptor)
        try? pipe.fileHandleForWriting.close()
        // Read while it runs, so a large output never fills the pipe and stalls it.
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        let status = child.wait(timeout: timeout)
        if status == nil { child.kill() }
        return (status, output)
    }

    /// SIGKILL, then the exit reaped.
    public func kill() {
        guard isRunning else { return }
        Glibc.kill(processIdentifier, SIGKILL)
        wait(timeout: 10)
    }
}
