import Foundation

/// Work that blocks (a D-Bus round trip, a keyring's password prompt) runs on
/// a thread of its own, so that no thread of Swift's small cooperative pool
/// waits on it; the caller suspends instead.
public enum BlockingWork {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }

    /// As `run`, waiting at most `seconds`: nil when the time is up. The work
    /// is not stopped (blocking C calls cannot be); its late result is dropped.
    public static func run<T: Sendable>(waitingAtMost seconds: Double, _ work: @escaping @Sendable () -> T) async -> T? {
        let answer = FirstAnswer<T?>()
        return await withCheckedContinuation { continuation in
            answer.waiting(continuation)
            Thread.detachNewThread { answer.give(work()) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { answer.give(nil) }
        }
    }
}

/// The first of two answers handed to the waiting task; the later one is
/// dropped. Sendable: its one field is read and written only under `lock`.
private final class FirstAnswer<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, Never>?

    func waiting(_ continuation: CheckedContinuation<Value, Never>) { lock.withLock { self.continuation = continuation } }

    func give(_ value: Value) {
        let waiting = lock.withLock { () -> CheckedContinuation<Value, Never>? in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
