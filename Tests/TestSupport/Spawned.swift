import Foundation
import OAuthCore

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
/// the descriptors named (0, 1, 2, and those handed at 3 and up), nothing else of this process's.
///
/// Its end is an event, not something polled against the clock: a thread of its own (never one
/// of Swift's cooperative pool) waits in `waitpid` and hands the status to whoever waits. A wait
/// whose time runs out looks once more before it says the child still runs, so a waiter that was
/// not scheduled for a while (a loaded machine, a starved pool) never reports as hung a child
/// that ended long ago.
public final class Spawned: @unchecked Sendable {
    public let processIdentifier: pid_t
    // Guarded by `lock`: the status once reaped, and who waits for it.
    private let lock = NSCondition()
    private var status: Int32?
    private var waiters: [UUID: CheckedContinuation<Int32?, Never>] = [:]
    private var atExit: (@Sendable () -> Void)?

    /// Starts `path` with `arguments` and this process's environment; `input`, `output` and
    /// `errors` become its standard input, output and error (nil: /dev/null).
    /// `handed`: more descriptors the child gets, at the numbers given (3 and up).
    public init(
        _ path: String, _ arguments: [String], input: Int32? = nil, output: Int32? = nil, errors: Int32? = nil, handed: [Int32: Int32] = [:]
    ) throws {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(null) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in [(input ?? null, Int32(0)), (output ?? null, 1), (errors ?? null, 2)] {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        for (target, source) in handed.sorted(by: { $0.key < $1.key }) { posix_spawn_file_actions_adddup2(&actions, source, target) }
        _ = spawnActionsCloseFrom(&actions, 3 + Int32(handed.count))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        var result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        // A program a test just copied (`copyExecutable`) is "busy" while any other thread's child,
        // forked but not yet exec'd, still holds the copy's descriptor (close-on-exec closes it only at
        // that exec): ETXTBSY, for a moment. Tried again until those children have exec'd, 5 s at most.
        let busySince = DispatchTime.now()
        while result == ETXTBSY, DispatchTime.now().uptimeNanoseconds - busySince.uptimeNanoseconds < 5_000_000_000 {
            usleep(5_000)
            result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        }
        guard result == 0 else { throw SandboxTestError("\(path) could not be started: \(String(cString: strerror(result)))") }
        processIdentifier = pid
        BlockingWork.detachThread { [self] in reap() }
    }

    /// On the reaper's own thread: blocks in `waitpid` until the child ends, then hands the status out.
    private func reap() {
        var raw: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(processIdentifier, &raw, 0) } while reaped < 0 && errno == EINTR
        // WIFEXITED ? WEXITSTATUS : 128 + WTERMSIG; a child nobody can wait for counts as gone.
        let ended: Int32 = reaped == processIdentifier ? (raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)) : 255
        lock.lock()
        status = ended
        let waiting = waiters
        waiters = [:]
        let hook = atExit
        atExit = nil
        lock.broadcast()
        lock.unlock()
        hook?()
        for continuation in waiting.values { continuation.resume(returning: ended) }
    }

    /// The exit status once the child has ended (128 + the signal for one killed); nil while it runs.
    public func poll() -> Int32? { lock.withLock { status } }

    public var isRunning: Bool { poll() == nil }

    /// Blocks the calling thread until the child ends or `timeout` passes. For threads of one's
    /// own only (a `BlockingWork` body); a task awaits `exit(timeout:)` instead.
    @discardableResult
    public func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while status == nil, lock.wait(until: deadline) {}
        return status
    }

    /// Suspends the calling task until the child ends or `timeout` passes; nil only when the
    /// child still ran at the deadline, looked at then, however late this task runs again.
    @discardableResult
    public func exit(timeout: TimeInterval) async -> Int32? {
        let key = UUID()
        return await withCheckedContinuation { continuation in
            let ended: Int32?? = lock.withLock {
                if let status { return .some(status) }
                waiters[key] = continuation
                return nil
            }
            if let ended { return continuation.resume(returning: ended) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                // The last look: under the lock, so either the reaper has handed this waiter
                // its status already, or the child truly still runs.
                let late = lock.withLock { waiters.removeValue(forKey: key) }
                late?.resume(returning: nil)
            }
        }
    }

    /// Runs `path` to its end and returns its exit status and what it wrote on standard output
    /// (its standard error goes to /dev/null); nil status when it did not end within `timeout`.
    /// The reading and waiting happen on a thread of their own.
    public static func run(_ path: String, _ arguments: [String], timeout: TimeInterval = 60) async throws -> (status: Int32?, output: Data)
    {
        let pipe = Pipe().closedOnExec()
        let child = try Spawned(path, arguments, output: pipe.fileHandleForWriting.fileDescriptor)
        try? pipe.fileHandleForWriting.close()
        // Read while it runs, so a large output never fills the pipe and stalls it.
        let output = await BlockingWork.run { pipe.fileHandleForReading.readDataToEndOfFile() }
        let status = await child.exit(timeout: timeout)
        if status == nil { await child.end() }
        return (status, output)
    }

    /// SIGKILL now; the reaper collects the exit.
    public func kill() {
        guard isRunning else { return }
        Glibc.kill(processIdentifier, SIGKILL)
    }

    /// SIGKILL, and `atOnce` on the reaper's thread the moment the child is gone, before any
    /// task waiting for it runs again (on a loaded machine that can be seconds later: a port the
    /// child let go is taken back here, not after a task hop another program's bind can beat).
    /// Suspends until both are done.
    public func end(thenAtOnce atOnce: @escaping @Sendable () -> Void) async {
        let ended = lock.withLock {
            if status != nil { return true }
            atExit = atOnce
            return false
        }
        if ended { atOnce() }
        await end()
    }

    /// SIGKILL, then suspends until the child is gone: nothing of it runs once this returns.
    public func end() async {
        kill()
        await exit(timeout: 60)
    }
}
