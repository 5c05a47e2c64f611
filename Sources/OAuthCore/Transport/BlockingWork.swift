import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Work that blocks (a D-Bus round trip, a keyring's password prompt) runs on
/// a thread of its own, so that no thread of Swift's small cooperative pool
/// waits on it; the caller suspends instead.
public enum BlockingWork {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            detachThread { continuation.resume(returning: work()) }
        }
    }

    /// As `run`, waiting at most `seconds`: nil when the time is up. The work
    /// is not stopped (blocking C calls cannot be); its late result is dropped.
    public static func run<T: Sendable>(waitingAtMost seconds: Double, _ work: @escaping @Sendable () -> T) async -> T? {
        let answer = FirstAnswer<T?>()
        return await withCheckedContinuation { continuation in
            answer.waiting(continuation)
            detachThread { answer.give(work()) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { answer.give(nil) }
        }
    }
}

extension BlockingWork {
    /// `body` on a new thread of its own, detached; false (and `body` not run) when no thread can be had.
    package static func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue().body()
                return nil
            }, box)
        guard started == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// `body` on a new thread of its own, detached: nobody joins it.
    package static func detachThread(_ body: @escaping @Sendable () -> Void) {
        // No thread to be had: the work runs on the caller's, rather than never.
        if !startThread(body) { body() }
    }

    private final class ThreadBody: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

/// The first of two answers handed to the waiting task; the later one is dropped.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)

    func waiting(_ continuation: CheckedContinuation<Value, Never>) { self.continuation.withLock { $0 = continuation } }

    func give(_ value: Value) {
        let waiting = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
