import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An advisory lock on a file (`flock`), shared by every process — and every
/// open of the file within one — that names the same path. The kernel drops it
/// when its holder exits, however it exits, so a crash never leaves it held.
public struct ProcessLock: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// A held lock; `release()` gives it back (so does the end of the process).
    /// Releasing twice, even at once from two tasks, closes the descriptor once.
    public final class Held: Sendable {
        private let descriptor: Mutex<Int32>
        init(_ descriptor: Int32) { self.descriptor = Mutex(descriptor) }
        public func release() {
            let open = descriptor.withLock { descriptor in
                defer { descriptor = -1 }
                return descriptor
            }
            if open >= 0 { close(open) }  // closing the only descriptor releases the flock
        }
        deinit { release() }
    }

    public enum Acquisition: Sendable {
        case held(Held)
        /// The lock file could not be opened (a read-only directory): there is no lock to take.
        case unavailable
        /// Another holder kept it past the limit.
        case timedOut
    }

    /// Waits for the lock, at most `timeout` seconds.
    public func acquire(timeout: TimeInterval) async -> Acquisition {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .unavailable }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return .held(Held(descriptor)) }
            // Polled, not blocking: a blocked flock would hold one of the few
            // threads that run every task of this process.
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline, !Task.isCancelled else {
                close(descriptor)
                return .timedOut
            }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}
