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
    /// `body` on a thread of its own, detached; false (and `body` not run) when no thread can be had.
    /// "Of its own": no other body runs on that thread until `body` returns, and `body` never waits
    /// for a thread (a body may block for minutes). A thread whose body returned waits a few seconds
    /// for the next one before it ends (`SpareThreads`), so that a steady stream of short bodies (the
    /// agent's reads of who a caller is: three or four a request) reuses threads instead of starting one
    /// for each.
    package static func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        if SpareThreads.handOn(body) { return true }
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                var next: (@Sendable () -> Void)? = Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue().body
                while let body = next {
                    body()
                    next = SpareThreads.waitForNext()
                }
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

/// Threads whose body returned, each waiting for another (most recent first) until `idleSeconds`
/// pass with none, when it ends.
private enum SpareThreads {
    static let idleSeconds = 10

    /// One waiting thread: the body handed to it, and its wake-up.
    final class Waiting: Sendable {
        let wake = ThreadSignal()
        let body = Mutex<(@Sendable () -> Void)?>(nil)
    }

    static let waiting = Mutex<[Waiting]>([])

    /// `body` handed to a waiting thread; false when none waits.
    static func handOn(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard let thread = waiting.withLock({ $0.popLast() }) else { return false }
        thread.body.withLock { $0 = body }
        thread.wake.signal()
        return true
    }

    /// The next body for this thread, or nil when none came within `idleSeconds` (the thread ends).
    static func waitForNext() -> (@Sendable () -> Void)? {
        let me = Waiting()
        waiting.withLock { $0.append(me) }
        if !me.wake.wait(until: .now() + .seconds(idleSeconds)) {
            // Gone from the list: nobody can hand this thread anything now, so it ends. Else a body
            // was handed on just as the time ran out, and its wake-up is on its way.
            let left = waiting.withLock { list in
                guard let index = list.firstIndex(where: { $0 === me }) else { return false }
                list.remove(at: index)
                return true
            }
            if left { return nil }
            me.wake.wait()
        }
        return me.body.withLock { body in
            defer { body = nil }
            return body
        }
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
